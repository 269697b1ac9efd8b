import Foundation
import JSONTokens
import ShopAPI
import TerminalText

/// How `ledger` prints (out of the executable, issue 44): one line per verdict (text or JSON), and the summary.
extension LedgerLine {
    /// `2026-11-27 12:00:01  com.reiterate.cheer.200 ×2  2000000000000001  req abc  credited  credited 400`.
    public var text: String {
        let line = self
        let stamp = LedgerLine.stamp
        let time = line.at.map(stamp) ?? "-------------------"
        let product = (line.productID.map(Sanitizer.line) ?? "?") + (line.quantity.map { " ×\($0)" } ?? "")
        let ids = line.requestIDs.isEmpty ? "-" : line.requestIDs.map(Sanitizer.line).joined(separator: ",")
        let blame = line.blame.map { " (\($0.words))" } ?? ""
        return "\(time)  \(product)  \(Sanitizer.line(line.transactionID))  \(ids)  \(line.verdict.rawValue)\(blame): \(Sanitizer.line(line.words))"
    }

    /// One JSON object (the `--json` line).
    public var json: String {
        let line = self
        var w = JSONWriter(capacity: 256)
        w.raw("{\"transaction_id\":")
        w.string(line.transactionID)
        w.raw(",\"product_id\":")
        if let product = line.productID { w.string(product) } else { w.raw("null") }
        w.raw(",\"quantity\":")
        if let quantity = line.quantity { w.int(quantity) } else { w.raw("null") }
        w.raw(",\"verdict\":")
        w.string(line.verdict.rawValue)
        w.raw(",\"blame\":")
        if let blame = line.blame { w.string(blame.rawValue) } else { w.raw("null") }
        w.raw(",\"request_ids\":[")
        for (i, id) in line.requestIDs.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(id)
        }
        w.raw("],\"user\":")
        if let user = line.user { w.string(user) } else { w.raw("null") }
        w.raw(",\"at\":")
        if let at = line.at { w.string(ISO8601.format(at)) } else { w.raw("null") }
        w.raw(",\"finding\":")
        w.raw(line.isFinding ? "true" : "false")
        w.raw(",\"words\":")
        w.string(line.words)
        // The one finding's record (the same object as in every JSON output that carries a finding), or null.
        w.raw(",\"shop_finding\":")
        if let finding = line.finding { w.verbatim(finding.json) } else { w.raw("null") }
        w.raw("}")
        return String(decoding: w.bytes, as: UTF8.self)
    }

    static func stamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: date)
    }
}

extension LedgerProbe {
    /// The probe's own finding (the balance moved otherwise than its answers say), as a JSON line.
    public static func findingJSON(_ words: String) -> String {
        var w = JSONWriter(capacity: 128)
        w.raw("{\"probe\":true,\"finding\":true,\"blame\":\"server\",\"words\":")
        w.string(words)
        w.raw("}")
        return String(decoding: w.bytes, as: UTF8.self)
    }

}

extension Ledger {
    /// `ledger: 3 lines (2 credited, 1 refunded); 1 finding`, and what it did not cover.
    public var summary: String {
        let ledger = self
        var counts: [Verdict: Int] = [:]
        for line in ledger.lines { counts[line.verdict, default: 0] += 1 }
        let parts = Verdict.allCases.compactMap { v in counts[v].map { "\($0) \(v.rawValue)" } }
        let findings = ledger.findings == 1 ? "1 finding" : "\(ledger.findings) findings"
        // What the summary covered: lines not seen or not checked, and credits whose amount was not judged.
        let open = ledger.unchecked + ledger.amountsUnjudged
        let covered = open == 0 ? "" : "; \(ledger.lines.count - open) of \(ledger.lines.count) judged whole"
            + (ledger.amountsUnjudged == 0 ? "" : ", \(ledger.amountsUnjudged) credited with the amount not judged")
            + (ledger.unchecked == 0 ? "" : ", \(ledger.unchecked) not seen or not checked")
        return "ledger: \(ledger.lines.count) line\(ledger.lines.count == 1 ? "" : "s")" + (parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")") + "; \(findings)" + covered
    }
}

extension LedgerLine {
    /// The line as the one finding type, when it is one (nil otherwise): of kind `ledger-…`, about the
    /// transaction by identity, with its blame ("not known" when the ledger cannot say) and every post's
    /// request id. The Checks tab and the ⚠ count read it.
    public var finding: ShopFinding? {
        guard isFinding else { return nil }
        let product = (productID ?? "?") + (quantity.map { " ×\($0)" } ?? "")
        return ShopFinding(kind: .ledger(verdict), subject: "transaction \(transactionID) (\(product))", blame: blame ?? .unknown,
                           expected: "the App Store's verified record and the backend's credits agree",
                           actual: "\(verdict.rawValue): \(words)", requestIDs: requestIDs)
    }
}
