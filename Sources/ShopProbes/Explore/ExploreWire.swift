import Foundation
import JSONTokens
import ShopAPI

/// Every request of a campaign goes through here: it takes its turn at the pace, counts against the budget
/// (a request the budget has no room for is not sent), and is sent once through the client as a probe (no
/// retry: the budget counts every request that goes out).
public actor ExploreWire {
    let client: ShopClient
    let pacer: Pacer
    public let budget: Int
    public private(set) var sent = 0
    /// The request ids of the answers the campaign got: what tells its exchanges from others in a shared session log
    /// (the TUI's own reads while a case runs).
    public private(set) var answered: Set<String> = []
    /// A pretend token of the campaign's, never a real one: the unknown token of the auth family.
    static let unknownToken = "explore-unknown-token-0000000000000000"

    public init(client: ShopClient, pacer: Pacer, budget: Int) {
        self.client = client
        self.pacer = pacer
        self.budget = budget
    }

    /// The budget has no room for another request: the case is not judged, and no later case is sent.
    public struct Spent: Error, Sendable {}

    /// Takes `count` requests from the budget and the pace (all of them before any is sent: writes sent at
    /// once go out together).
    func take(_ count: Int = 1) async throws {
        guard sent + count <= budget else { throw Spent() }
        sent += count
        for _ in 0..<count { await pacer.turn() }
    }

    /// One request: `operation` with this query and body, authenticated as `auth` says. A failure below HTTP
    /// throws `ShopAPIError`.
    func send(_ operation: OperationID, query: [(name: String, value: String)], json: [UInt8]? = nil,
              auth: ProbeAuthorization = .token, taken: Bool = false) async throws -> ProbeAnswer {
        if !taken { try await take() }
        // A token renewed on the way is two more requests (the refresh, the resend): only when the budget has room.
        let answer = try await client.probe(operation, query: query, json: json, authorization: auth, mayRenew: sent + 2 <= budget)
        if answer.renewed { sent += 2 }
        if let id = answer.requestID { answered.insert(id) }
        return answer
    }
}

/// One answer the campaign judges: its status, the request id, the server's words, and the body decoded
/// as the operation's answer when it is a 2xx.
struct Answer: Sendable, Equatable {
    var status: Int
    var requestID: String?
    var words: String?
    var balance: Int?

    init(_ probe: ProbeAnswer) {
        status = probe.status
        requestID = probe.requestID
        if !probe.isSuccess {
            let w = ServerWords.read(probe.body, contentType: probe.headers[.contentType])
            words = w.text ?? w.code
        } else {
            balance = try? Balance.decode(probe.body).balance
        }
    }

    /// `HTTP 402 (balance 3 is less than 4; nothing was spent)`, or `200, balance 12`.
    var said: String {
        if (200..<300).contains(status) { return "\(status)" + (balance.map { ", balance \($0)" } ?? "") }
        return "HTTP \(status)" + (words.map { " (\($0))" } ?? "")
    }
}

extension ProbeAnswer {
    /// `2xx`, `4xx`, `5xx`: what two answers must share to agree on a refusal or an acceptance.
    var statusClass: Int { status / 100 }

    /// The `Date` header, read as an HTTP date.
    var serverDate: Date? { headers[.date].flatMap(HTTPDate.parse) }

    /// The body's charset when its `Content-Type` names one (lowercased, quotes removed).
    var charset: String? {
        guard let type = headers[.contentType] else { return nil }
        for part in type.split(separator: ";").dropFirst() {
            let kv = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if kv.count == 2, kv[0].lowercased() == "charset" { return kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased() }
        }
        return nil
    }

    /// Why a shared cache may store this answer (RFC 9111 §3.5: a request with `Authorization` is stored by a
    /// shared cache only under `public`, `s-maxage` or `must-revalidate`), or nil when it may not.
    var sharedCacheable: String? {
        let directives = headers[values: .cacheControl].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let names = directives.map { String($0.prefix { $0 != "=" }) }
        guard !names.contains("private"), !names.contains("no-store") else { return nil }
        guard names.contains(where: { ["public", "s-maxage", "must-revalidate"].contains($0) }) else { return nil }
        return "Cache-Control: " + directives.joined(separator: ", ")
    }
}

extension RequestKey {
    /// `GET /api/v1/balance?user_id=qa-alice`: a request of `operation` with this query, as a finding's subject.
    static func operationLine(_ operation: OperationID, query: [(name: String, value: String)]) -> String {
        guard let e = EndpointDescription.all.first(where: { $0.operation == operation }) else { return operation.rawValue }
        return RequestKey(e.method, e.path, query: query.map { QueryItem($0.name, $0.value) }).description
    }
}
