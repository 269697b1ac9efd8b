import Foundation
import ShopAPI

/// One operation of the shop, with its parameters: what an `Effect.request` sends. Each case is
/// one endpoint of the contract (`LiveShopService.send` names it).
public enum ShopRequest: Hashable, Sendable {
    case balance(user: String)
    case packs
    case history(user: String, page: Int, perPage: Int)
    /// A spend or a purchase, for `user` (a transaction id sent as typed goes as it was typed).
    case write(ShopWrite, user: String)
}

extension ShopRequest {
    /// The read a request key names (a pin's request, read again): the balance, the packs or a history
    /// page, with its query; nil for a write or any other request.
    public init?(reading key: RequestKey) {
        switch key.operation {
        case .getBalance:
            guard let user = key.value("user_id") else { return nil }
            self = .balance(user: user)
        case .listAudioPacks:
            self = .packs
        case .getCheerHistory:
            guard let user = key.value("user_id") else { return nil }
            self = .history(user: user, page: key.value("page").flatMap { Int($0) } ?? 1, perPage: key.value("per_page").flatMap { Int($0) } ?? 50)
        default:
            return nil
        }
    }
}

/// What the shop answered, by the shape of its body (a write answers with the balance).
public enum ShopAnswer: Equatable, Sendable {
    case balance(CheerBalance)
    case packs(AudioPackList)
    case history(CheerHistoryPage)

    public var balance: CheerBalance? { if case let .balance(b) = self { return b } else { return nil } }
    public var packs: AudioPackList? { if case let .packs(p) = self { return p } else { return nil } }
    public var history: CheerHistoryPage? { if case let .history(h) = self { return h } else { return nil } }
}

/// A request's answer as it came back (as Get's `Response<T>`): the result, the request id, when it
/// was sent and answered, and whose exchange it was.
public struct ShopReply: Equatable, Sendable {
    /// Whose exchange it was: the tool's own (the next source is the app's, seen through a proxy).
    public enum Source: Equatable, Sendable { case tool }

    public var request: ShopRequest
    public var result: Result<ShopAnswer, ShopAPIError>
    /// The answer's `X-Request-Id` (a failure's own when its response head arrived).
    public var requestID: String?
    public var sentAt: Date
    public var answeredAt: Date
    public var source: Source

    public init(_ request: ShopRequest, _ result: Result<ShopAnswer, ShopAPIError>, requestID: String? = nil,
                sentAt: Date, answeredAt: Date? = nil, source: Source = .tool) {
        self.request = request
        self.result = result
        self.requestID = requestID ?? { if case let .failure(e) = result { return e.requestID } else { return nil } }()
        self.sentAt = sentAt
        self.answeredAt = answeredAt ?? sentAt
        self.source = source
    }

    public var duration: TimeInterval { answeredAt.timeIntervalSince(sentAt) }

    /// The result as the value `kind` picks; nil for an answer of another kind (no service sends one).
    func value<T>(_ kind: (ShopAnswer) -> T?) -> Result<T, ShopAPIError>? {
        switch result {
        case let .failure(error): return .failure(error)
        case let .success(answer): return kind(answer).map { .success($0) }
        }
    }
}

/// What the view models need from the REST core — a protocol, so tests drive them with a fake.
public protocol ShopService: Sendable {
    /// Sends `request`: its answer and the request id it came with. Throws `ShopAPIError`, or
    /// `CancellationError` when the calling task is cancelled.
    func send(_ request: ShopRequest) async throws -> (answer: ShopAnswer, requestID: String?)
    /// Exchanges recorded from now on (the request inspector).
    func exchangeUpdates() async -> AsyncStream<Exchange>
    /// Every exchange the session's log still holds, in memory or spilled (a HAR file of them).
    func recordedExchanges() async -> SessionExchanges
}

/// The real REST core behind `ShopService`.
public struct LiveShopService: ShopService {
    public let client: ShopClient

    public init(client: ShopClient) { self.client = client }

    public func send(_ request: ShopRequest) async throws -> (answer: ShopAnswer, requestID: String?) {
        switch request {
        case let .balance(user):
            let (value, id) = try await client.sendAnswered(Balance(user: user))
            return (.balance(value), id)
        case .packs:
            let (value, id) = try await client.sendAnswered(AudioPacks())
            return (.packs(value), id)
        case let .history(user, page, perPage):
            var (value, id) = try await client.sendAnswered(CheerHistory(user: user, page: page, perPage: perPage))
            value.requestID = id
            return (.history(value), id)
        case let .write(.spend(spend), user):
            let (value, id) = try await client.sendAnswered(SpendCheer(spend, user: user))
            return (.balance(value), id)
        case let .write(.purchase(purchase), user):
            let (value, id) = try await client.sendAnswered(PurchaseCheer(purchase, user: user))
            return (.balance(value), id)
        }
    }

    public func exchangeUpdates() async -> AsyncStream<Exchange> { await client.exchanges.updates() }
    public func recordedExchanges() async -> SessionExchanges { await client.exchanges.session() }
}
