import Foundation
import HTTPTypes
import JSONTokens

// One request sent as it is, for `explore` (issue 45): whatever status comes back is the answer, so a
// campaign can hold a refusal of a legal request, or an answer given without a valid token, against the
// contract. Sent through the client like any other request: its exchange is logged, checked by the
// watchdog, kept in the HAR, and its token is redacted there.

/// How a probe authenticates.
public enum ProbeAuthorization: Sendable, Equatable {
    /// The client's access token (renewed once, as any request's, when it is refused and a refresh token is set).
    case token
    /// No `Authorization` header.
    case none
    /// This `Authorization` value, sent as it is (a malformed or unknown token, an expired one).
    case header(String)
}

/// A probe's answer, 2xx or not: its status, head and body.
public struct ProbeAnswer: Sendable {
    public var status: Int
    public var headers: HTTPFields
    public var body: [UInt8]
    /// The client's token was refused and renewed on the way (a refresh and a resend: two more requests).
    public var renewed = false
    public init(status: Int, headers: HTTPFields, body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
    public var requestID: String? { headers[.requestID] }
    public var isSuccess: Bool { (200..<300).contains(status) }
}

/// A request of `Target`'s operation with the query and body given (a parameter at its legal extreme, a
/// body of the campaign's); never decoded.
public struct ProbeRequest<Target: Endpoint>: Endpoint {
    public typealias Response = [UInt8]
    public static var endpoint: EndpointDescription { Target.endpoint }
    public static var requiresAuth: Bool { Target.requiresAuth }
    public var query: [(name: String, value: String)]
    public var json: [UInt8]?

    public init(query: [(name: String, value: String)], json: [UInt8]?) {
        self.query = query
        self.json = json
    }

    public func body() throws -> [UInt8]? { json }
    public static func decode(_ body: [UInt8]) throws -> [UInt8] { body }
    public static func decode(_ body: [UInt8], tokens: [JSONToken]) throws -> [UInt8] { body }
}

extension ShopClient {
    /// Sends `operation` once with this query and body, authenticated as `authorization` says: no retry, and
    /// the answer whatever its status. A failure below HTTP throws `ShopAPIError.transport`.
    /// `mayRenew`: a 401 to the client's own token renews it and sends again (two more requests); false: the
    /// 401 is the answer.
    public func probe(_ operation: OperationID, query: [(name: String, value: String)], json: [UInt8]?,
                      authorization: ProbeAuthorization = .token, mayRenew: Bool = true) async throws -> ProbeAnswer {
        switch operation {
        case .listAudioPacks: return try await probe(ProbeRequest<AudioPacks>(query: query, json: json), authorization: authorization, mayRenew: mayRenew)
        case .getBalance: return try await probe(ProbeRequest<Balance>(query: query, json: json), authorization: authorization, mayRenew: mayRenew)
        case .getCheerHistory: return try await probe(ProbeRequest<CheerHistory>(query: query, json: json), authorization: authorization, mayRenew: mayRenew)
        case .purchaseCheer: return try await probe(ProbeRequest<PurchaseCheer>(query: query, json: json), authorization: authorization, mayRenew: mayRenew)
        case .spendCheer: return try await probe(ProbeRequest<SpendCheer>(query: query, json: json), authorization: authorization, mayRenew: mayRenew)
        case .refreshToken: return try await probe(ProbeRequest<RefreshToken>(query: query, json: json), authorization: authorization, mayRenew: mayRenew)
        }
    }
}
