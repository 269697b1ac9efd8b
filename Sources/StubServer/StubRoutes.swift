import HTTPTypes
import Hummingbird
import StubCore

/// The operations of the contract (`reiterate-api.yaml`, operationId), one route each.
enum Operation: String, CaseIterable, Sendable {
    case listAudioPacks, getBalance, getCheerHistory, purchaseCheer, spendCheer, refreshToken

    var path: String {
        switch self {
        case .listAudioPacks: return "/api/v1/audio_packs"
        case .getBalance: return "/api/v1/balance"
        case .getCheerHistory: return "/api/v1/cheer_history"
        case .purchaseCheer: return "/api/v2/purchase_cheer"
        case .spendCheer: return "/api/v1/spend_cheer"
        case .refreshToken: return "/api/v1/auth/refresh"
        }
    }

    var method: HTTPRequest.Method {
        switch self {
        case .listAudioPacks, .getBalance, .getCheerHistory: return .get
        case .purchaseCheer, .spendCheer, .refreshToken: return .post
        }
    }

    /// Faults that rewrite this operation's data (others only make sense where there is such data).
    var contentFaults: Set<FaultKind> {
        switch self {
        case .getCheerHistory: return [.hostile, .malformedEntry, .badPaging, .duplicateEntry, .outOfOrder, .vanishEntry, .driftingTotal, .hiddenPage, .shiftedPage,
                                       .shortPages, .staleRead, .narrowPerPage, .unstableEntry]
        case .spendCheer: return [.wrongDebit, .cutComment, .doubleEntry, .noEntry, .noDebit, .stuckTotal, .acceptUnknownProduct, .acceptOverspend,
                                  .acceptNonpositiveAmount, .acceptUnknownUser, .lenientBody, .refuseButApply, .secondUserWrite, .staleAnswer,
                                  .refuseWholeBalance, .raceOverspend, .escapeMarkup, .narrowText, .futureDate]
        case .purchaseCheer: return [.acceptUnknownUser, .acceptAnyBundle, .retypedTransaction, .acceptNegativeTransaction, .lenientBody, .refuseButApply,
                                     .secondUserWrite, .doubleCredit, .replayCredit, .noCredit, .staleAnswer, .unverifiedCredit, .trustProduct,
                                     .ignoreQuantity, .keepRefunded, .anyAccount, .raceReplay]
        case .getBalance: return [.strayCredit, .staleRead, .missingBalance]
        case .listAudioPacks: return [.hostile]
        default: return []
        }
    }

    /// The operation of the route the router matched (`RequestContext.endpointPath`).
    init?(endpointPath: String?) {
        guard let endpointPath, let operation = Self.allCases.first(where: { $0.path == endpointPath }) else { return nil }
        self = operation
    }
}

enum StubRoutes {
    /// `/_stub` and below: the control endpoints, never faulted.
    static func isControl(_ path: String) -> Bool {
        path == "/_stub" || path.hasPrefix("/_stub/")
    }

    /// A path without empty segments (`//`, a trailing `/`): the only form the stand-in's routes answer.
    static func isCanonical(_ path: String) -> Bool {
        path == "/" + path.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
    }
}

extension StubService {
    /// The stand-in's router: its middleware (outermost first) and one route per operation (the shop's and
    /// the App Store's) and control endpoint.
    ///
    /// Request id → recorder → request log → faults → errors → route. Each layer sees what the layers
    /// inside it decided (the faults that hit, a reset connection) through `StubContext.notes`.
    public func makeRouter() -> Router<StubContext> {
        let router = Router(context: StubContext.self)
        router.add(middleware: RequestIDMiddleware())
        if let recorder { router.add(middleware: RecorderMiddleware(recorder: recorder)) }
        if requestLog { router.add(middleware: RequestLogMiddleware()) }
        router.add(middleware: FaultMiddleware(registry: faults))
        router.add(middleware: ErrorMiddleware())
        addAPIRoutes(to: router)
        addAppStoreRoutes(to: router)
        addControlRoutes(to: router)
        addAppStoreControlRoutes(to: router)
        return router
    }

    func addAPIRoutes(to router: Router<StubContext>) {
        for operation in Operation.allCases {
            router.on(RouterPath(operation.path), method: operation.method) { request, context in
                try await self.respond(to: operation, request: request, context: context)
            }
        }
    }
}
