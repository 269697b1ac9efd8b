import AppStoreRecord
import Foundation
import ShopAPI
import ShopLedger

// The Purchases tab (issue 38): the App Store's transactions beside the backend's credits, one verdict
// each (`ShopLedger`). The program reads the App Store (`LedgerReader`); the update only shows it.

/// What the program reads for the Purchases tab: the ledger of the session's purchase exchanges (the
/// tool's own and the app's through the proxy) against the App Store.
public protocol LedgerReader: Sendable {
    /// The ledger now, over `exchanges` (the session's, newest first as the state keeps them).
    func readLedger(exchanges: [Exchange]) async -> Result<LedgerView, LedgerFailure>
}

public struct LedgerFailure: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// A ledger read: its lines, the App Store's transactions behind them (the detail shows them decoded),
/// and the backend's events each line was matched with.
public struct LedgerView: Equatable, Sendable {
    public var ledger: Ledger
    public var transactions: [String: AppStoreTransaction]
    public var events: [ShopEvent]
    /// The transaction id the customer's history was read from.
    public var anchor: String
    public var readAt: Date

    public init(ledger: Ledger, transactions: [String: AppStoreTransaction], events: [ShopEvent], anchor: String, readAt: Date) {
        self.ledger = ledger
        self.transactions = transactions
        self.events = events
        self.anchor = anchor
        self.readAt = readAt
    }

    /// The backend's purchase posts of the line's transaction (its request ids', in time order).
    public func posts(of line: LedgerLine) -> [ShopEvent] {
        events.filter { event in
            guard let p = event.purchase else { return false }
            return p.transactionID.description == line.transactionID || event.requestID.map(line.requestIDs.contains) == true
        }
    }
}

public struct PurchasesState: Equatable, Sendable {
    public enum Phase: Equatable, Sendable {
        /// The environment has no App Store table.
        case off
        /// Not read yet (the tab reads when it opens).
        case idle
        case loading
        case loaded
        /// The read failed: its words (the lines of the last read stay).
        case failed(String)
    }

    public internal(set) var phase: Phase
    public internal(set) var view: LedgerView?
    public internal(set) var list = SelectableList<LedgerLine>()
    /// The selected line's detail full size (Enter), else beside the list.
    public internal(set) var detailFull = false

    public init(enabled: Bool = false) { phase = enabled ? .idle : .off }
}

extension ShopUpdate {
    /// Opening the Purchases tab reads the ledger the first time.
    static func openPurchases(_ state: inout AppState) -> [Effect] {
        openTab(.purchases, &state)
        return state.purchases.phase == .idle ? readLedger(&state) : []
    }

    static func readLedger(_ state: inout AppState) -> [Effect] {
        guard state.purchases.phase != .off else {
            state.notice = Notice(.info, "The Purchases tab needs the environment's [appstore] table (docs/ledger.md)")
            return []
        }
        guard state.purchases.phase != .loading else { return [] }
        state.purchases.phase = .loading
        state.steps.add("read the App Store's ledger")
        return [.readLedger]
    }

    static func purchasesAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        switch action {
        case .toggle:
            state.purchases.detailFull.toggle()
        case .back:
            if state.purchases.detailFull { state.purchases.detailFull = false } else { state.notice = nil }
        default:
            _ = state.purchases.list.move(action, page: state.screen.pageSize)
        }
        return []
    }

    static func ledgerRead(_ result: Result<LedgerView, LedgerFailure>, _ state: inout AppState) -> [Effect] {
        switch result {
        case let .success(view):
            state.purchases.view = view
            state.purchases.phase = .loaded
            state.purchases.list.replace(with: view.ledger.lines) { $0.transactionID }
            let findings = view.ledger.findings
            state.notice = Notice(findings > 0 ? .error : .info,
                                  "Purchases: \(view.ledger.lines.count) line\(view.ledger.lines.count == 1 ? "" : "s"), "
                                      + "\(findings) finding\(findings == 1 ? "" : "s")")
        case let .failure(failure):
            state.purchases.phase = .failed(failure.message)
            state.notice = Notice(.error, "The App Store could not be read: \(failure.message)")
        }
        return []
    }
}
