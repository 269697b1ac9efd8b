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
    /// The App Store's record of one transaction (`AppStorePaid.read`), for the purchase form: what was
    /// paid, believed only once verified.
    func appStoreRecord(_ transactionID: String) async -> AppStoreRecordRead
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
    /// The lines whose finding was told while the watch ran (each is told once).
    var told: Set<String> = []
    /// The findings already on the Checks tab (by transaction and verdict): a ledger read again adds none twice.
    var checked: Set<String> = []
    /// While the watch runs, the ledger is read again this often (seconds; each watch round asks).
    public static let liveInterval: TimeInterval = 30

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

    /// While the watch runs: the ledger read again when the last read is `liveInterval` old (or there
    /// was none), so a purchase the backend never credits is flagged without `r`.
    static func liveLedger(_ state: inout AppState) -> [Effect] {
        guard state.watch.isOn, state.purchases.phase != .off, state.purchases.phase != .loading, let now = state.clock else { return [] }
        if let last = state.purchases.view?.readAt, now.timeIntervalSince(last) < PurchasesState.liveInterval { return [] }
        return readLedger(&state)
    }

    static func ledgerRead(_ result: Result<LedgerView, LedgerFailure>, _ state: inout AppState) -> [Effect] {
        switch result {
        case let .success(view):
            state.purchases.view = view
            state.purchases.phase = .loaded
            state.purchases.list.replace(with: view.ledger.lines) { $0.transactionID }
            // Each finding goes to the Checks tab and the ⚠ count too, once (one finding type for every judge).
            var records: [CheckRecord] = []
            for line in view.ledger.lines where line.isFinding && state.purchases.checked.insert("\(line.transactionID) \(line.verdict.rawValue)").inserted {
                if let finding = line.finding { records.append(CheckRecord(finding, at: state.clock ?? line.at ?? .distantPast)) }
            }
            state.checks.add(records)
            // While the watch runs, a new finding is told at once (and once), wherever the tab is.
            let fresh = view.ledger.lines.filter { $0.isFinding && !state.purchases.told.contains($0.transactionID) }
            state.purchases.told.formUnion(fresh.map(\.transactionID))
            if state.watch.isOn, let first = fresh.first {
                let more = fresh.count > 1 ? " (and \(fresh.count - 1) more)" : ""
                let text = "Purchase \(first.transactionID): \(first.verdict.rawValue)\(first.blame.map { " (\($0.words))" } ?? "")\(more): see 6 Purchases"
                state.notice = Notice(.error, text)
                return state.watch.alert.map { [.alert($0, text)] } ?? []
            }
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

extension ShopUpdate {
    /// `R` on the Purchases tab: a report on the selected line with both sides: the App Store's verified
    /// record (or why it is not believed) and the backend's post of it, with its request and answer.
    static func purchaseReport(_ state: AppState) -> BugReport? {
        guard let line = state.purchases.list.selected, let view = state.purchases.view else { return nil }
        let posts = view.posts(of: line)
        // The backend's exchange: the session's own record of the first post (its headers and bodies).
        let exchange = posts.lazy.compactMap(\.requestID).compactMap { id in state.exchanges.first { $0.requestID == id } }.first
        let blame = line.blame.map { " (\($0.words))" } ?? ""
        var side: [String] = []
        if let t = view.transactions[line.transactionID] {
            side.append("Signature and chain verified.")
            side.append("")
            side.append("- **Transaction:** \(BugReport.code(t.transactionID))")
            side.append("- **Product:** \(BugReport.code(t.productID)) × \(t.quantity) (\(BugReport.text(t.type)))")
            side.append("- **Bundle:** \(BugReport.code(t.bundleID)), \(BugReport.text(t.environment))")
            if let at = t.purchaseDate { side.append("- **Bought (UTC):** \(BugReport.utc(at))") }
            side.append("- **Signed (UTC):** \(BugReport.utc(t.signedDate))")
            if let revoked = t.revocationDate {
                side.append("- **Refunded (UTC):** \(BugReport.utc(revoked))" + (t.revocationReason.map { " (reason \($0))" } ?? ""))
            }
        } else {
            side.append("No verified record of \(BugReport.code(line.transactionID)) for this customer.")
        }
        side.append("")
        side.append("The backend's posts of it: " + (posts.isEmpty ? "none among the exchanges." : ""))
        for p in posts {
            side.append("- \(p.at.map(BugReport.utc) ?? "?") by the \(BugReport.text(p.source)): "
                + (p.status.map { "HTTP \($0)" } ?? "no answer") + (p.balance.map { ", balance \($0)" } ?? "")
                + (p.requestID.map { ", request id \(BugReport.code($0))" } ?? ""))
        }
        var report = BugReport(title: "Purchase \(line.transactionID): \(line.verdict.rawValue)\(blame)", context: state.context, steps: state.steps.steps,
                               exchange: exchange, curl: exchange.map { CurlCommand.make($0, baseURL: state.context.baseURL, tokenVariable: state.context.tokenVariable) },
                               checks: [], width: state.screen.width, height: state.screen.height)
        report.verdict = "\(line.verdict.rawValue)\(blame): \(line.words)"
        report.appStoreSide = side
        report.exchangeHeading = "The backend's post"
        report.missingExchange = "No post of it is among this session's exchanges."
        return report
    }
}
