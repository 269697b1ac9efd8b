import Foundation
import ShopAPI

// What a campaign remembers between cases, and how it shows text that came back different.

/// An entry in a few words (a finding's actual).
enum EntryWords {
    static func of(_ e: CheerHistoryEntry) -> String {
        "\(e.amount) for \(e.product) on \(ISO8601.format(e.date))" + (e.comments?.first?.body.map { " «\(TextDifference.escaped($0, limit: 40))»" } ?? "")
    }
}

/// The balance the campaign last settled on, and the entries it wrote with the server's clock around each write.
actor LastBalance {
    var balance: Int?
    /// Each entry the campaign made, and the `Date`s of the answers around its write.
    var written: [String: ClosedRange<Date>] = [:]
    /// The balance the case being judged started its writes from.
    var caseStart: Int?
    func startCase() { caseStart = nil }
    func started(_ value: Int) { caseStart = value }
    func set(_ value: Int?) { balance = value }
    func add(_ value: Int) { balance = balance.map { $0 + value } }
    func wrote(_ id: String, within window: ClosedRange<Date>) { written[id] = window }
}

/// Two texts shown so that their difference is visible: every scalar beyond printable ASCII as `\u{…}`.
enum TextDifference {
    static func escaped<S: StringProtocol>(_ text: S, limit: Int = 120) -> String {
        var out = ""
        var n = 0
        for s in text.unicodeScalars {
            if n >= limit { out += "…"; break }
            out += (0x20..<0x7F).contains(s.value) ? String(s) : "\\u{\(String(s.value, radix: 16, uppercase: true))}"
            n += 1
        }
        return out
    }

    /// Both texts from just before their first difference, and where it is.
    static func shown(_ sent: String, _ back: String?) -> (String, String, String) {
        guard let back else { return (escaped(sent), "no comment", "") }
        let a = Array(sent.unicodeScalars), b = Array(back.unicodeScalars)
        var i = 0
        while i < a.count, i < b.count, a[i] == b[i] { i += 1 }
        let from = max(0, i - 8)
        let lead = from > 0 ? "…" : ""
        let sa = String(String.UnicodeScalarView(a[from...])), sb = String(String.UnicodeScalarView(b[min(from, b.count)...]))
        return (lead + escaped(sa), lead + escaped(sb), " (they differ from character \(i + 1); \(a.count) characters sent, \(b.count) back)")
    }
}
