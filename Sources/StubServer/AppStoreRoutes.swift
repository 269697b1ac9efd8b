import Foundation
import HTTPTypes
import Hummingbird
import StubCore

/// The subset of Apple's App Store Server API the stand-in serves (issue 38), at its own root, in
/// Apple's shapes: its own bearer tokens (`AppStoreAuth`), not the shop's; Apple's error bodies; every
/// JSON answer `Content-Type: application/json`.
enum AppStoreRoute: CaseIterable, Sendable {
    /// Get Transaction Info.
    case transactionInfo
    /// Get Transaction History (v2).
    case transactionHistory
    /// Get Refund History (v2).
    case refundHistory

    var path: String {
        switch self {
        case .transactionInfo: return "/inApps/v1/transactions/:transactionId"
        case .transactionHistory: return "/inApps/v2/history/:transactionId"
        case .refundHistory: return "/inApps/v2/refund/lookup/:transactionId"
        }
    }

    /// Faults that change the signed transactions of an answer.
    static let contentFaults: Set<FaultKind> = [.brokenChain, .brokenSignature, .wrongBundle, .wrongEnvironment]

    /// The route the router matched (`RequestContext.endpointPath`, which names a capture `{transactionId}`).
    init?(endpointPath: String?) {
        guard let endpointPath, let route = Self.allCases.first(where: { RouterPath($0.path).description == endpointPath }) else { return nil }
        self = route
    }

    /// Apple's answers are `application/json`, without a charset.
    static let jsonType = "application/json"

    /// `/inApps` and below: answered in Apple's shapes (a `rate_limit` fault too).
    static func isAppStore(_ path: String) -> Bool {
        path == "/inApps" || path.hasPrefix("/inApps/")
    }
}

/// Get Transaction Info's answer.
struct TransactionInfoBody: Encodable {
    let signedTransactionInfo: String
}

/// Get Transaction History's answer.
struct HistoryBody: Encodable {
    let revision: String
    let hasMore: Bool
    let bundleId: String
    let appAppleId: Int64
    let environment: String
    let signedTransactions: [String]
}

/// Get Refund History's answer.
struct RefundHistoryBody: Encodable {
    let signedTransactions: [String]
    let revision: String
    let hasMore: Bool
}

extension StubService {
    func addAppStoreRoutes(to router: Router<StubContext>) {
        for route in AppStoreRoute.allCases {
            router.get(RouterPath(route.path)) { request, context in
                await self.respond(to: route, request: request, context: context)
            }
        }
    }

    /// One App Store Server API call: a 401 with an empty body unless the token is one Apple would take,
    /// then the lookup, each transaction signed now (with the faults handed to this route).
    func respond(to route: AppStoreRoute, request: Request, context: StubContext) async -> Response {
        let now = Date().timeIntervalSince1970
        if let refusal = AppStoreAuth.refusal(header: request.headers[.authorization], key: appStore.apiPublicKey, now: now) {
            context.notes.reason = "401: " + refusal
            return Response(status: .unauthorized)
        }
        let id = context.parameters.get("transactionId") ?? ""
        let revision = Self.queryParameters(request)["revision"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            switch route {
            case .transactionInfo:
                let transaction = try await store.appStoreTransaction(id: id)
                let signed = try sign([transaction], context: context, now: now)
                return Self.apple(TransactionInfoBody(signedTransactionInfo: signed.first ?? ""))
            case .transactionHistory:
                let page = try await store.appStorePage(.history, of: id, revision: revision)
                return Self.apple(HistoryBody(
                    revision: page.revision, hasMore: page.hasMore, bundleId: AppStoreAccount.bundleID, appAppleId: AppStoreAccount.appAppleID,
                    environment: AppStoreAccount.environment, signedTransactions: try sign(page.transactions, context: context, now: now)
                ))
            case .refundHistory:
                let page = try await store.appStorePage(.refunds, of: id, revision: revision)
                return Self.apple(RefundHistoryBody(
                    signedTransactions: try sign(page.transactions, context: context, now: now), revision: page.revision, hasMore: page.hasMore
                ))
            }
        } catch let error as AppStoreError {
            return Self.apple(error, status: error.status)
        } catch {
            return Responses.internalError(error)
        }
    }

    /// The transactions signed at `now`, as the faults handed to this route say; each of those faults is
    /// applied when there was a transaction to sign.
    func sign(_ transactions: [AppStoreTransaction], context: StubContext, now: Double) throws -> [String] {
        let faults = AppStoreRoute.contentFaults.sorted { $0.rawValue < $1.rawValue }.compactMap(context.contentFault)
        if !transactions.isEmpty { faults.forEach(context.notes.applied) }
        let kinds = Set(faults.map(\.spec.kind))
        return try transactions.map { transaction in
            var payload = transaction.payload(signedDate: Int64((now * 1000).rounded(.down)))
            if kinds.contains(.wrongBundle) { payload.bundleId = "com.other.app" }
            if kinds.contains(.wrongEnvironment) { payload.environment = "Production" }
            return try appStore.sign(payload, unrelated: kinds.contains(.brokenChain), breakSignature: kinds.contains(.brokenSignature))
        }
    }

    /// `value` as Apple's JSON answer.
    static func apple(_ value: some Encodable, status: Int = 200, headers: HTTPFields = [:]) -> Response {
        Responses.json(value, status: HTTPResponse.Status(code: status), headers: headers, contentType: AppStoreRoute.jsonType)
    }
}
