import Foundation
import JSONTokens
import ShopAPI

/// One write the app sent through the proxy (a spend or a purchase), as the watch pairs it with what it
/// reads: what it asked, what the server answered (and whether the app got that answer), and when.
public struct AppWrite: Equatable, Sendable, Identifiable {
    /// The proxy's number for the exchange (unique within a session).
    public var id: Int
    /// What it asked, read from its body (a transaction id as the app sent it: a number, or text).
    public var kind: ShopWrite
    /// `user_id` from the query or the body; nil when the app named none (the token names the user).
    public var user: String?
    public var sentAt: Date
    /// When the server's answer (or the failure) came; nil while it is out.
    public var answeredAt: Date?
    /// The server's status; nil while out, and when no answer came from the server.
    public var status: Int?
    /// The balance the answer said.
    public var balance: Int?
    public var requestID: String?
    /// The fault the proxy put into it.
    public var fault: FaultNote?
    /// The contract watchdog's findings on the exchange (a verdict of the same fault says so).
    public var answerChecks: [ContractCheck] = []

    public init(id: Int, kind: ShopWrite, user: String?, sentAt: Date, answeredAt: Date? = nil, status: Int? = nil, balance: Int? = nil,
                requestID: String? = nil, fault: FaultNote? = nil) {
        self.id = id
        self.kind = kind
        self.user = user
        self.sentAt = sentAt
        self.answeredAt = answeredAt
        self.status = status
        self.balance = balance
        self.requestID = requestID
        self.fault = fault
    }

    /// The server took it (a 2xx): it changed the shop.
    public var applied: Bool { status.map { (200..<300).contains($0) } ?? false }
    /// The request reached the server (no fault kept it from it).
    public var reachedServer: Bool { fault?.reachedServer ?? true }
    /// The app got the server's whole answer.
    public var delivered: Bool { fault?.appGotAnswer ?? true }
    /// The server applied it and the app never heard: the case where what the app does next matters.
    public var answerLost: Bool { reachedServer && !delivered && status != nil }

    /// The app's write in an exchange the proxy saw, or nil when it is not a spend or a purchase (or its
    /// body cannot be read as one: the contract's request checks say why).
    public static func from(_ e: HTTPExchange, answeredAt: Date? = nil) -> AppWrite? {
        // Only a write's body is read (every other POST of the app, a token refresh, is none of the watch's);
        // which operation it is was decided when the exchange was made.
        let operation = e.request.operation
        guard e.source == .app, let body = e.request.body, let kind = ShopWrite(operation: operation, body: body),
              case let .object(json)? = JSONValue.parse(body) else { return nil }
        let bodyUser: String? = if case let .string(u)? = json["user_id"] { u } else { nil }
        var write = AppWrite(id: e.serial, kind: kind, user: e.request.key.value("user_id") ?? bodyUser, sentAt: e.startedAt,
                             requestID: e.requestID, fault: e.fault)
        write.answerChecks = e.findings.map(\.check)
        if let response = e.response {
            write.status = response.status
            if (200..<300).contains(response.status) { write.balance = operation?.answeredBalance(response.body) }
        }
        if e.answeredAt != nil || e.failure != nil || e.response != nil {
            write.answeredAt = answeredAt ?? e.startedAt.addingTimeInterval(Double(e.duration.components.seconds) + Double(e.duration.components.attoseconds) / 1e18)
        }
        return write
    }

    /// `POST spend_cheer 7 on Rain “great pack”`, `POST purchase_cheer com.reiterate.cheer.200 tx 42`.
    public func request(names: [String: String] = [:]) -> String {
        switch kind {
        case let .spend(s):
            return "POST spend_cheer \(Wording.grouped(s.amount)) on \(names[s.product] ?? s.product)\(s.comment.map { " “\($0)”" } ?? "")"
        case let .purchase(p):
            return "POST purchase_cheer \(p.identifier) tx \(p.transactionID)"
        }
    }

    /// `→ 200 (balance 1,243)`, `→ 200 (balance 1,243), not delivered (lose_answer)`, `→ never reached the server (fault offline)`.
    public var outcome: String {
        let said = balance.map { " (balance \(Wording.grouped($0)))" } ?? ""
        if let fault, !fault.reachedServer { return "→ never reached the server (fault \(fault.name))" }
        guard let status else { return answeredAt == nil ? "→ waiting" : "→ no answer from the server" }
        // Forwarded, and the app never got the whole answer (lose_answer, truncate).
        if let fault, !fault.appGotAnswer { return "→ \(status)\(said), not delivered (\(fault.name))" }
        return "→ \(status)\(said)"
    }

    /// Whether two writes ask the same thing (what a second tap of one button sends).
    func sameAsk(_ other: AppWrite) -> Bool { kind == other.kind && user == other.user }

    var purchase: ShopWrite.Purchase? { kind.purchase }
}
