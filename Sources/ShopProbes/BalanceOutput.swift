/// `print balance --json`: the value and where it came from.
public struct BalanceOutput: Encodable, Sendable {
    public var balance: Int
    public var source: String
    public var fetchedAt: String?
    public var reason: String?

    public init(balance: Int, source: String, fetchedAt: String?, reason: String?) {
        self.balance = balance
        self.source = source
        self.fetchedAt = fetchedAt
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey {
        case balance, source, reason
        case fetchedAt = "fetched_at"
    }
}
