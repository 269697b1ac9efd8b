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
}

extension ShopAPIError {
    /// A few words for "cached · <reason>": why the live value could not be had.
    public var shortReason: String {
        switch self {
        case let .transport(error, _):
            switch error {
            case .connectionRefused: return "offline: connection refused"
            case .dns: return "offline: host not found"
            case .tls: return "offline: TLS error"
            case .connectTimeout, .timeout: return "offline: timed out"
            case .connectionLost: return "offline: connection lost"
            case .offline: return "offline: network unreachable"
            case .responseTooLarge, .invalidURL, .other: return "offline: network error"
            }
        case let .http(status, _, _, _, _, _): return "server error: HTTP \(status)"
        case let .notJSON(status, _, _, _): return "server error: HTTP \(status), not JSON"
        case .undecodable: return "unreadable response"
        case .signInExpired: return "sign-in expired"
        case .configuration: return "configuration error"
        }
    }
}
