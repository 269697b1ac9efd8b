import ShopAPI
import ShopCompare
import JSONTokens
import TerminalText

/// The request inspector: the exchanges the REST core recorded, newest first, and the selected one.
public typealias RequestsState = SelectableList<Exchange>

extension SelectableList where Row == Exchange {
    /// The exchanges the inspector keeps.
    public static var capacity: Int { 100 }
}

extension AppState {
    /// The last write's own exchange: the newest spend or purchase recorded since it was sent (its
    /// last attempt, after a refreshed sign-in). Nil when none was: the write failed before it was
    /// sent, or the inspector has dropped it. Never an older write's.
    var lastWriteExchange: Exchange? {
        guard let after = write.sentAfter else { return nil }
        return exchanges.first { $0.id > after && $0.source == .tool && $0.operation.map(Self.writeOperations.contains) == true }
    }

    /// The operations of a write: a spend and a purchase.
    static let writeOperations: Set<OperationID> = [SpendCheer.endpoint.operation, PurchaseCheer.endpoint.operation]
}

extension ShopUpdate {
    static func requestsAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        if action == .back {
            // Esc puts the full-size detail away, else the notice.
            if state.screen.requestDetailFull { state.screen.requestDetailFull = false } else { state.notice = nil }
            return []
        }
        if state.screen.requestDetailFull {
            // Full size, the movement keys scroll the detail, no further than its last screenful
            // (`RequestDetail.maxScroll`, as the renderer clamps it): up after the end moves at once.
            let page = state.screen.pageSize
            let end = RequestDetail.maxScroll(state)
            let scroll = min(state.screen.detailScroll, end)
            switch action {
            case .down: state.screen.detailScroll = min(end, scroll + 1)
            case .up: state.screen.detailScroll = max(0, scroll - 1)
            case .pageDown: state.screen.detailScroll = min(end, scroll + page)
            case .pageUp: state.screen.detailScroll = max(0, scroll - page)
            case .first: state.screen.detailScroll = 0
            case .last: state.screen.detailScroll = end
            default: break
            }
        } else if state.requests.move(action, page: state.screen.pageSize) {
            return []
        }
        switch action {
        case .toggle:
            state.screen.requestDetailFull.toggle()
            state.screen.detailScroll = 0
        case .copyID:
            guard let id = state.requests.selected?.requestID else {
                state.notice = Notice(.info, "This request has no request id to copy.")
                return []
            }
            state.notice = Notice(.info, "copied request id \(id) to the clipboard (OSC 52)")
            return [.copy(id)]
        case .pin:
            return pinSelected(&state)
        case .showSource:
            showNextSource(&state)
        default: break
        }
        return []
    }

    static func recordExchange(_ exchange: Exchange, _ state: inout AppState) {
        // The answer of a request shown as pending takes its place.
        if let index = state.exchanges.firstIndex(where: { $0.id == exchange.id }) {
            let wasPending = state.exchanges[index].isPending
            state.exchanges[index] = exchange
            if let shown = state.requests.rows.firstIndex(where: { $0.id == exchange.id }) { state.requests.update(at: shown, exchange) }
            addFindings(exchange, &state)
            if wasPending { appExchangeEnded(exchange, &state) }
            return
        }
        addFindings(exchange, &state)
        state.exchanges = Array(([exchange] + state.exchanges).prefix(RequestsState.capacity))
        showRequests(&state)
        if !exchange.isPending { appExchangeEnded(exchange, &state) }
    }

    /// The Requests tab's rows: the exchanges of the source shown (`a`), the selection kept on its row;
    /// the same exchange stays selected while new ones arrive on top (the newest, if it was selected).
    static func showRequests(_ state: inout AppState) {
        let shown = state.requestsShown.map { source in state.exchanges.filter { $0.source == source } } ?? state.exchanges
        state.requests.replace(with: shown, topStays: true) { $0.id }
    }

    static func addFindings(_ exchange: Exchange, _ state: inout AppState) {
        guard !exchange.findings.isEmpty else { return }
        state.checks.add(exchange.findings.map {
            var finding = ShopFinding($0, subject: "\(exchange.method) \(exchange.path)", requestID: exchange.requestID)
            // On the app's traffic, who is at fault is said (on the tool's own it is always the server).
            if exchange.source != .app { finding.blame = nil }
            return CheckRecord(finding, at: exchange.startedAt, key: FindingKey($0, method: exchange.method, target: exchange.path))
        }, journaled: false)  // in the session with its exchange
    }
}

extension ShopUpdate {
    /// `P`: pins the selected answer for its request (or unpins a pinned request). Only a whole answer
    /// of a read the tool compares can be pinned: a GET of the balance, the packs or a history page
    /// that answered 2xx, kept whole in the log (16 KiB).
    static func pinSelected(_ state: inout AppState) -> [Effect] {
        guard let exchange = state.requests.selected else { return [] }
        guard let request = exchange.key, RecordedRead.What(key: request) != nil else {
            state.notice = Notice(.info, "Only the answers of the balance, the packs and the history can be pinned.")
            return []
        }
        if state.pinned.contains(request) { return [.unpin(request)] }
        guard let status = exchange.status, status / 100 == 2, !exchange.isPending else {
            state.notice = Notice(.info, "Only an answer that came (2xx) can be pinned.")
            return []
        }
        guard let text = exchange.responseBodyPreview, let body = JSONValue.parse(Array(text.utf8)) else {
            state.notice = Notice(.info, "This answer is longer than the 16 KiB the log keeps: `reiterate-shop pins --add` pins it whole.")
            return []
        }
        return [.pin(Pin(request: request, body: body, requestID: exchange.requestID, pinnedAt: exchange.startedAt))]
    }

    /// The pins changed (or were read at start); `outcome` says what was done.
    static func pinsChanged(_ requests: Set<RequestKey>, _ outcome: PinOutcome?, _ state: inout AppState) -> [Effect] {
        state.pinned = requests
        switch outcome {
        case let .pinned(request)?:
            state.notice = Notice(.info, "Pinned \(request): later answers to it are compared with this one (P again unpins).")
            state.steps.add("pinned the answer to \(Sanitizer.line(request.description)) (P)")
        case let .unpinned(request)?:
            state.notice = Notice(.info, "Unpinned \(request).")
            state.steps.add("unpinned \(Sanitizer.line(request.description)) (P)")
        case let .failed(message)?: state.notice = Notice(.error, message)
        case nil: break
        }
        return []
    }
}

/// What a pin or an unpin came to.
public enum PinOutcome: Equatable, Sendable {
    case pinned(RequestKey)
    case unpinned(RequestKey)
    case failed(String)
}
