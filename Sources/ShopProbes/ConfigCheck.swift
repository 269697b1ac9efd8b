import Foundation
import ShopSettings
import TerminalText

extension ResolvedSettings {
    /// `config check`'s lines for the tables past the connection's (those the executable prints first):
    /// the users, the explore users, the bundles, the watch, the contract, the proxy's, and the App Store
    /// table. A secret is named (its variable, its file) and never shown; a file says whether it can be read.
    public func checkLines(environment env: [String: String]) -> [String] {
        let source = { (key: String) in self.sources[key].map { "   (\(Sanitizer.line($0)))" } ?? "" }
        func readable(_ path: String) -> String { FileManager.default.isReadableFile(atPath: path) ? "readable" : "MISSING or unreadable" }
        var out: [String] = []
        out.append("  users      " + (users.isEmpty ? "none" : users.map(Sanitizer.line).joined(separator: ", ")))
        out.append("  explore    " + (exploreUsers.isEmpty ? "none (explore writes as the user on a local tier only)" : exploreUsers.map(Sanitizer.line).joined(separator: ", ")))
        out.append("  bundles    " + zip(bundleIdentifiers, bundles).map { "\(Sanitizer.line($0)) = \($1)" }.joined(separator: ", ") + source("bundles"))
        out.append("  watch      \(watch ? "from the start" : "off until w or --watch"), every \(watchInterval) s, notify \(notify.rawValue)")
        out.append("  contract   " + (contract.map { "\(Sanitizer.line($0)) (\(readable($0)))" } ?? "built in"))
        // The app's proxy (`reiterate-shop proxy`, `--proxy`), apart from `proxy` above (the one this tool's requests go through).
        out.append("  app proxy  proxy_listen \(proxyListen.map(Sanitizer.line) ?? "default (127.0.0.1:8877)") · proxy_hosts \(proxyHosts.isEmpty ? "none" : proxyHosts.map(Sanitizer.line).joined(separator: ", ")) · proxy_start \(proxyStart)")
        guard let a = appStore else {
            out.append("  [appstore] none: ledger and the Purchases tab are off (docs/ledger.md)")
            return out
        }
        out.append("  [appstore]")
        out.append("    url          \(Sanitizer.line(a.url))")
        out.append("    key_file     \(Sanitizer.line(a.keyFile)) (\(readable(a.keyFile)); the key itself is never shown)")
        out.append("    key_id       \(Sanitizer.line(a.keyID)) · issuer_id \(Sanitizer.line(a.issuerID)) · bundle_id \(Sanitizer.line(a.bundleID))")
        out.append("    root_ca      " + (a.rootCA.map { "\(Sanitizer.line($0)) (\(readable($0)))" } ?? "Apple's root (built in)"))
        out.append("    transaction  " + (a.transaction.map(Sanitizer.line) ?? "none (ledger reads the ids the session posted)"))
        return out
    }
}
