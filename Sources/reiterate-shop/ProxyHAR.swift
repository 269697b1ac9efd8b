import Foundation
import ShopAPI
import ShopProbes
import ShopCache
import TerminalText

/// `--har FILE`: every app exchange the proxy kept, written when it ends (0600, no secret).
enum ProxyHAR {
    static func write(_ log: ExchangeLog, to path: String, baseURL: String) async {
        let exchanges = await log.session()
        do {
            let data = try HAR.encode(exchanges, baseURL: baseURL, creator: "reiterate-shop proxy", version: ShopClientConfiguration.appVersion)
            try AtomicFile.write(data, to: path, directory: URL(fileURLWithPath: path).deletingLastPathComponent().path)
            Terminal.err("note: wrote \(exchanges.count) app exchange\(exchanges.count == 1 ? "" : "s") to \(Sanitizer.line(path)) (HAR 1.2)\(SessionSpill.gap(exchanges))\n")
            SessionJournal.wrote(path, what: "HAR of the app's exchanges")
        } catch {
            Terminal.err("warning: could not write the HAR file \(Sanitizer.line(path)): check that its folder exists and is writable\n")
        }
    }
}
