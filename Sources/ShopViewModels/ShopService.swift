import ShopAPI

/// What the view models need from the REST core — a protocol, so tests drive them with a fake.
public protocol ShopService: Sendable {
    func balance(user: String) async throws -> CheerBalance
    func audioPacks() async throws -> AudioPackList
    func history(user: String, page: Int, perPage: Int) async throws -> CheerHistoryPage
    func spend(amount: Int, product: String, comment: String?, user: String) async throws -> CheerBalance
    func purchase(identifier: String, transactionID: UInt64, user: String) async throws -> CheerBalance
    /// Exchanges recorded from now on (the request inspector).
    func exchangeUpdates() async -> AsyncStream<Exchange>
    /// Every exchange the session's log still holds, oldest first (a HAR file of them).
    func recordedExchanges() async -> [Exchange]
}

/// The real REST core behind `ShopService`.
public struct LiveShopService: ShopService {
    public let client: ShopClient

    public init(client: ShopClient) { self.client = client }

    public func balance(user: String) async throws -> CheerBalance { try await client.send(Balance(user: user)) }
    public func audioPacks() async throws -> AudioPackList { try await client.send(AudioPacks()) }
    public func history(user: String, page: Int, perPage: Int) async throws -> CheerHistoryPage {
        try await client.send(CheerHistory(user: user, page: page, perPage: perPage))
    }
    public func spend(amount: Int, product: String, comment: String?, user: String) async throws -> CheerBalance {
        try await client.send(SpendCheer(amount: amount, product: product, comment: comment, user: user))
    }
    public func purchase(identifier: String, transactionID: UInt64, user: String) async throws -> CheerBalance {
        try await client.send(PurchaseCheer(identifier: identifier, transactionID: transactionID, user: user))
    }
    public func exchangeUpdates() async -> AsyncStream<Exchange> { await client.exchanges.updates() }
    public func recordedExchanges() async -> [Exchange] { await client.exchanges.all() }
}
