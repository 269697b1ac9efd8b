import ShopAPI

/// What the view models need from the REST core — a protocol, so tests drive them with a fake.
public protocol ShopService: Sendable {
    func balance(user: String) async throws -> CheerBalance
    func audioPacks() async throws -> AudioPackList
    func history(user: String, page: Int, perPage: Int) async throws -> CheerHistoryPage
    func spend(amount: Int, product: String, comment: String?, user: String) async throws -> CheerBalance
    func purchase(identifier: String, transactionID: TransactionID, user: String) async throws -> CheerBalance
    /// Exchanges recorded from now on (the request inspector).
    func exchangeUpdates() async -> AsyncStream<Exchange>
    /// Every exchange the session's log still holds, oldest first (a HAR file of them).
    func recordedExchanges() async -> [Exchange]
    /// One read of the watch, with the request id of its answer.
    func read(_ read: WatchRead, user: String) async throws -> WatchAnswer
}

/// What the watch reads.
public enum WatchRead: Hashable, Sendable {
    case balance
    /// The newest entries (the first page, `perPage` of them).
    case history(perPage: Int)
    case packs
}

/// A watch read's answer and the request id it came with.
public struct WatchAnswer: Equatable, Sendable {
    public enum Value: Equatable, Sendable {
        case balance(CheerBalance)
        case history(CheerHistoryPage)
        case packs(AudioPackList)
    }
    public var value: Value
    public var requestID: String?

    public init(_ value: Value, requestID: String? = nil) {
        self.value = value
        self.requestID = requestID
    }
}

extension ShopService {
    /// Without request ids (a service that has none).
    public func read(_ read: WatchRead, user: String) async throws -> WatchAnswer {
        switch read {
        case .balance: return WatchAnswer(.balance(try await balance(user: user)))
        case let .history(perPage): return WatchAnswer(.history(try await history(user: user, page: 1, perPage: perPage)))
        case .packs: return WatchAnswer(.packs(try await audioPacks()))
        }
    }
}

/// The real REST core behind `ShopService`.
public struct LiveShopService: ShopService {
    public let client: ShopClient

    public init(client: ShopClient) { self.client = client }

    public func balance(user: String) async throws -> CheerBalance { try await client.send(Balance(user: user)) }
    public func audioPacks() async throws -> AudioPackList { try await client.send(AudioPacks()) }
    public func history(user: String, page: Int, perPage: Int) async throws -> CheerHistoryPage {
        var (answer, requestID) = try await client.sendAnswered(CheerHistory(user: user, page: page, perPage: perPage))
        answer.requestID = requestID
        return answer
    }
    public func spend(amount: Int, product: String, comment: String?, user: String) async throws -> CheerBalance {
        try await client.send(SpendCheer(amount: amount, product: product, comment: comment, user: user))
    }
    public func purchase(identifier: String, transactionID: TransactionID, user: String) async throws -> CheerBalance {
        guard case let .number(id) = transactionID else {
            // Sent as typed: a transaction id the typed endpoint cannot carry (text, a negative number),
            // as typed, through the same client (logged and checked like any other write).
            let body = #"{"identifier":\#(TransactionID.jsonString(identifier)),"transaction_id":\#(transactionID.json)}"#
            return try await client.send(RawJSONWrite<PurchaseCheer>(json: body, user: user))
        }
        return try await client.send(PurchaseCheer(identifier: identifier, transactionID: id, user: user))
    }
    public func exchangeUpdates() async -> AsyncStream<Exchange> { await client.exchanges.updates() }
    public func recordedExchanges() async -> [Exchange] { await client.exchanges.all() }

    public func read(_ read: WatchRead, user: String) async throws -> WatchAnswer {
        switch read {
        case .balance:
            let (value, id) = try await client.sendAnswered(Balance(user: user))
            return WatchAnswer(.balance(value), requestID: id)
        case let .history(perPage):
            let (value, id) = try await client.sendAnswered(CheerHistory(user: user, page: 1, perPage: perPage))
            return WatchAnswer(.history(value), requestID: id)
        case .packs:
            let (value, id) = try await client.sendAnswered(AudioPacks())
            return WatchAnswer(.packs(value), requestID: id)
        }
    }
}
