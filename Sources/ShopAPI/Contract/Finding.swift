import JSONTokens

/// The checks a response can fail: the contract's structure (`status` … `schema`), what the history's
/// pages must agree on (`paging`, `order`, `duplicate`), and the rules its words state (docs/checks.md).
public enum ContractCheck: String, Sendable, Codable, CaseIterable {
    case status
    case contentType = "content-type"
    case schema
    case requestID = "request-id"
    case retryAfter = "retry-after"
    case paging, order, duplicate
    /// "402 when the balance is too low; nothing is spent then" (spendCheer).
    case spendRefused = "spend-refused"
    /// "A transaction is credited once: a second call with the same transaction_id answers 409" (purchaseCheer).
    case creditedOnce = "credited-once"
    /// Not the contract's: the answer differs from one the tester pinned for the same request (`P`).
    case pinned
}

/// Compares an answer with the one pinned for its request, if any (the app sets it; the REST core
/// knows no pin). Its findings join the exchange's, beside the contract's.
public protocol AnswerPins: Sendable {
    func check(method: String, pathAndQuery: String, status: Int, body: [UInt8], tokens: [JSONToken]) async -> [Finding]
}

/// A way a response deviates from the contract (`../shared/api/reiterate-api.yaml`): the data still
/// shows; the deviation is reported with the check's name, expected against actual.
public struct Finding: Sendable, Equatable, Codable {
    public var check: ContractCheck
    public var expected: String
    public var actual: String

    public init(check: ContractCheck, expected: String, actual: String) {
        self.check = check
        self.expected = expected
        self.actual = actual
    }

    /// `[schema] expected balance: integer, got "12"`.
    public var line: String { "[\(check.rawValue)] expected \(expected), got \(actual)" }
}
