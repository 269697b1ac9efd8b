import JSONTokens
/// The rules the contract states in words about writes, checked on each answer a client sees —
/// whoever sent the write (this tool, a script, the phone through the same client).
struct WriteMemory: Sendable {
    static let capacity = 4_096
    /// Transactions credited (2xx) in this session, with the request id of the answer, oldest first.
    private var credited: [UInt64: String] = [:]
    private var order: [UInt64] = []

    /// "A transaction is credited once: a second call with the same transaction_id answers 409 and
    /// changes nothing." A second 2xx for one transaction is a finding.
    mutating func credited(request: [UInt8]?, requestID: String?) -> [Finding] {
        guard let request, let id = Self.transactionID(request) else { return [] }
        if let first = credited[id] {
            return [Finding(check: .creditedOnce, expected: "409 for transaction \(id), credited before (request id \(first))",
                            actual: "credited again")]
        }
        credited[id] = requestID ?? "none"
        order.append(id)
        if order.count > Self.capacity { credited[order.removeFirst()] = nil }
        return []
    }

    /// The request's `transaction_id`, read from its digits: ids go up to 2⁶⁴ − 1, past what a JSON
    /// reader's `Int` holds.
    static func transactionID(_ body: [UInt8]) -> UInt64? { transactionDigits(body).flatMap { UInt64($0) } }

    /// The request's `transaction_id` as its number's text (the last, when it is given twice), however
    /// large; nil when it is not a number.
    static func transactionDigits(_ body: [UInt8]) -> String? {
        let tokens = JSONTokenizer.tokens(body)
        return body.withUnsafeBufferPointer { b -> String? in
            let c = JSONCursor(bytes: b, tokens: tokens)
            let key = Array("transaction_id".utf8)
            var k = tokens.count - 1  // the last one, as a reader keeps the last of a key given twice
            while k >= 2 {
                defer { k -= 1 }
                guard tokens[k].kind == .number, tokens[k - 1].kind == .colon, c.string(tokens[k - 2], equals: key) else { continue }
                return String(decoding: UnsafeBufferPointer(rebasing: b[tokens[k].range]), as: UTF8.self)
            }
            return nil
        }
    }

    /// "402 when the balance is too low; nothing is spent then." A spend answered 2xx whose new
    /// balance is below zero was accepted on a balance too low.
    static func spendAccepted(_ answer: JSONValue) -> [Finding] {
        guard case let .object(fields) = answer, case let .int(balance)? = fields["balance"], balance < 0 else { return [] }
        return [Finding(check: .spendRefused, expected: "402 when the balance is too low (nothing spent)",
                        actual: "accepted, leaving a balance of \(balance)")]
    }
}
