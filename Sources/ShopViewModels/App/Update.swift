import Foundation
import ShopAPI
import ShopLedger
import ShopModel
import ShopCompare
import ShopCache

/// Everything the app can experience. A front end sends keys already resolved by the keymap
/// (`.action`, `.text`), the terminal's size, timer ticks and signals; the store sends the results
/// of effects.
public enum Message: Sendable {
    // The program
    /// Read the cache, then load everything.
    case start
    /// Read the cached balance, then load the live one (and nothing else): `print balance`.
    case startBalance
    /// Show what the front end already read from the cache, then load everything (no cache read:
    /// the first frame is drawn from it at once).
    case startWithCache(CachedShop)
    // The front end
    case action(Action)
    /// A spend or purchase with no dialog (`reiterate-shop spend … --yes`): sent at once, then verified.
    case write(ShopWrite)
    /// A row of the current tab's list picked by a front end (a mouse click).
    case select(Int)
    /// A character typed into the focused text field (the filter or a dialog field).
    case text(Character)
    case resize(width: Int, height: Int)
    /// The slow timer; `n` counts its ticks.
    case tick(Int)
    case signal(Int32)
    // Results of effects
    case cacheLoaded(Token, balance: CacheEntry<CheerBalance>?, packs: CacheEntry<AudioPackList>?, firstPage: CacheEntry<CheerHistoryPage>?)
    /// The user's timeline as the cache kept it (for the user of that key).
    case timelineLoaded(Timeline, user: CacheKey)
    /// A shop request (`Effect.request`) answered; the token's purpose says what it was for.
    case answered(Token, ShopReply)
    /// The watch's wait is over.
    case woke(Token, at: Date)
    case transactionIDMade(UInt64)
    case exchangeRecorded(Exchange)
    /// The app's proxy started (or could not).
    case proxy(ProxyNews)
    /// The request with this token was cancelled before it answered.
    case cancelled(Token)
    /// The front end's own news (for example "copied").
    case notify(String)
    /// A bug report or HAR file was written (its path), or could not be.
    case evidenceWritten(EvidenceKind, Result<String, EvidenceError>)
    /// The front end put a curl line where it could (`c`); where it reached.
    case curlCopied(CurlCopy, ClipboardReach)
    /// The curl line's file was written (its path), or could not be.
    case curlSaved(CurlCopy, Result<String, EvidenceError>)
    /// The requests pinned now (read at start, or after `P`), and what was done.
    case pinsChanged(Set<RequestKey>, PinOutcome?)
    /// A comparison (`D`) came back; a snapshot (`S`) was saved, or not.
    case compared(Token, Result<DiffResult, CompareFailure>)
    case snapshotSaved(Result<String, CompareFailure>)
    /// The Purchases tab's ledger was read, or not.
    case ledgerRead(Result<LedgerView, LedgerFailure>)
    /// The App Store's record of the purchase form's transaction was read (or said why not).
    case appStoreRecordRead(AppStoreRecordRead)
    /// A case of the TUI's explore campaign ended; the campaign ended.
    case exploreNews(ExploreNews)
    case exploreDone(ExploreDone)
    /// The open test session as the program read it; the program's answer to N, n or C.
    case sessionRead(SessionRead)
    case sessionChanged(Result<String, SessionFailure>)
}

extension Message {
    /// The request this message answers (or reports cancelled).
    var answering: Token? {
        switch self {
        case let .cacheLoaded(token, _, _, _), let .answered(token, _), let .cancelled(token), let .woke(token, _), let .compared(token, _):
            return token
        default:
            return nil
        }
    }

    /// When it happened, for the messages that say (the update has no clock of its own).
    var time: Date? {
        switch self {
        case let .answered(_, reply): return reply.answeredAt
        case let .woke(_, at):
            return at
        default:
            return nil
        }
    }
}

/// How a finding is told beyond the screen.
public enum AlertStyle: String, Equatable, Sendable {
    case bell, osc9
}

/// Work the update function asks for, as data; the store runs it and feeds results back as messages.
public indirect enum Effect: Equatable, Sendable {
    /// Runs each in turn: the next starts when the one before has finished.
    case sequence([Effect])
    /// Runs all at once; finished when all are.
    case batch([Effect])
    case readCache(Token, user: CacheKey, shop: CacheKey)
    /// Only the cached first history page (answered as `cacheLoaded` with it alone).
    case readCachedFirstPage(Token, user: CacheKey)
    /// Send a shop request (answered with `.answered(token, reply)`, or `.cancelled(token)`).
    case request(Token, ShopRequest)
    /// Answers `.woke(token)` after `seconds` (the watch's interval), unless cancelled first.
    case wake(Token, after: Double)
    /// The request with this token is no longer wanted.
    case cancel(Token)
    case writeBalance(key: CacheKey, CheerBalance, fetchedAt: Date)
    case writePacks(key: CacheKey, AudioPackList, fetchedAt: Date)
    case writeFirstPage(key: CacheKey, CheerHistoryPage, fetchedAt: Date)
    /// Keeps the user's timeline for the next run.
    case writeTimeline(key: CacheKey, Timeline)
    /// A random transaction id for the buy form (answered with `.transactionIDMade`).
    case makeTransactionID
    // For the front end
    case quit(status: Int32)
    /// Put this text on the clipboard (OSC 52, and tmux's paste buffer inside tmux).
    case copy(String)
    /// Put this curl line on the clipboard and answer where it reached (`.curlCopied`).
    case copyCurl(CurlCopy)
    /// Write this curl line to a file in the reports folder, 0600 (answered with `.curlSaved`).
    case saveCurl(CurlCopy)
    /// Tell of a finding: the terminal's bell, or an OSC 9 notification with this text.
    case alert(AlertStyle, String)
    /// Write this bug report, with the screen as text, under the reports folder (`R`).
    case writeReport(BugReport)
    /// Put this fault (the proxy's `--fault` syntax, or `clear`) into the app's traffic (answered `.proxy(.faultPut)`).
    case putFault(String)
    /// Write every request of the session as a HAR file (`e`).
    case writeHAR
    /// Pin this answer for its request (`P`), or take the pin of a request away.
    case pin(Pin)
    case unpin(RequestKey)
    /// Compare `a` with `b` (`D`); save a snapshot of `user` (`S`).
    case compare(Token, a: CompareSide, b: CompareSide, what: ComparedPart)
    case saveSnapshot(user: String)
    /// Read the App Store's ledger for the Purchases tab (the program's `LedgerReader`).
    case readLedger
    /// Read the App Store's record of one transaction, for the purchase form (the program's `LedgerReader`).
    case readAppStoreRecord(transactionID: String)
    /// Run the explore campaign (the program's `Explorer`), answered `.exploreNews` a case and `.exploreDone`;
    /// `.stopExplore` cancels it.
    case explore
    case stopExplore
    /// The test session (the program's `SessionKeeper`): read it, open one, add a note, close it.
    case readSession
    case startSession(name: String)
    case noteSession(String)
    case closeSession

    /// Whether the store starts it at once, wherever it stands (in a sequence or a batch too): a
    /// cancellation, what the front end does (quit, copy, alert), a report (the screen as it is now) and
    /// a change of the pins. Stated once: `AppStore.launch` and `run` both ask it.
    var startsAtOnce: Bool {
        switch self {
        case .cancel, .quit, .copy, .copyCurl, .alert, .writeReport, .pin, .unpin, .stopExplore: true
        default: false
        }
    }

    /// The token of a request the store runs as its own cancellable task (`.cancel(token)` stops it).
    var requestToken: Token? {
        switch self {
        case .request(let token, _), .wake(let token, _), .compare(let token, _, _, _):
            return token
        default:
            return nil
        }
    }

    /// This effect and those inside it, in order.
    public var flattened: [Effect] {
        switch self {
        case let .sequence(list), let .batch(list): return list.flatMap(\.flattened)
        default: return [self]
        }
    }
}

/// The one place state changes: `update(&state, message) -> effects` (Bubble Tea's Update). Pure:
/// no I/O and no clock (times come inside messages), so every transition is a plain unit test.
/// Each feature (screen, balance and session, packs, history, requests, actions) owns its part;
/// this routes a message to the first part that takes it.
public enum ShopUpdate {
    public static func update(_ state: inout AppState, _ message: Message) -> [Effect] {
        let shown = state.notice
        let effects = route(&state, message)
        noteShownError(since: shown, &state)
        return effects
    }

    static func route(_ state: inout AppState, _ message: Message) -> [Effect] {
        if let at = message.time { state.clock = at }
        if let token = message.answering {
            // The one place a stale answer is dropped: no resource and no table entry holds its token.
            guard let purpose = state.settle(token) else { return [] }
            return answered(purpose, message, &state)
        }
        switch message {
        case .start:
            noteStart(&state)
            let effects = session(.start, &state)
            return effects + (state.watch.onAtStart ? startWatch(&state) : [])
        case .startBalance: return session(.startBalance, &state)
        case let .startWithCache(cached):
            noteStart(&state)
            applyCache(balance: cached.balance, packs: cached.packs, firstPage: cached.firstPage, &state)
            if let timeline = cached.timeline { state.write.timeline = timeline }
            // The first page the first frame did not need is read now, before the requests go out.
            let deferred: [Effect] = cached.firstPageDeferred ? [.readCachedFirstPage(state.ask(.cacheRead), user: state.context.userKey)] : []
            let effects: [Effect] = deferred + [.batch(loadBalance(&state) + loadPacks(&state) + loadHistoryPage(state.history.page, &state))]
            return effects + (state.watch.onAtStart ? startWatch(&state) : [])
        case let .notify(text):
            state.notice = Notice(.info, text)
            return []
        case let .timelineLoaded(timeline, user):
            // Only the current user's, and never over what this run has learnt since.
            if user == state.context.userKey, state.write.timeline.points.isEmpty { state.write.timeline = timeline }
            return []
        case let .evidenceWritten(what, result):
            return evidenceWritten(what, result, &state)
        case let .curlCopied(copy, reach):
            return curlCopied(copy, reach, &state)
        case let .curlSaved(copy, result):
            return curlSaved(copy, result, &state)
        case .cacheLoaded, .answered, .cancelled, .woke, .compared:
            return []  // answered above
        case .transactionIDMade: return actionMessage(message, &state)
        case let .write(kind): return writeNow(kind, &state)
        case let .exchangeRecorded(exchange):
            recordExchange(exchange, &state)
            return []
        case let .proxy(news):
            return proxyNews(news, &state)
        case let .pinsChanged(requests, outcome):
            return pinsChanged(requests, outcome, &state)
        case let .snapshotSaved(result):
            return snapshotSaved(result, &state)
        case let .ledgerRead(result):
            return ledgerRead(result, &state)
        case let .appStoreRecordRead(record):
            return appStoreRecordRead(record, &state)
        case let .exploreNews(news): return exploreNews(news, &state)
        case let .exploreDone(done): return exploreDone(done, &state)
        case let .sessionRead(read): return sessionRead(read, &state)
        case let .sessionChanged(result): return sessionChanged(result, &state)
        case let .text(c):
            return typed(c, &state)
        case let .select(index):
            guard state.mode == .browse else { return [] }
            switch state.screen.tab {
            case .shop: selectPack(index, &state)
            case .requests: state.requests.select(index)
            case .checks: state.checks.list.select(index)
            case .live: state.watch.timeline.select(index)
            case .purchases: state.purchases.list.select(index)
            case .session: state.session.scroll = max(0, index)
            case .history:
                return moveCursor(to: index, &state)
            }
            return []
        case .resize, .tick, .signal:
            return screen(message, &state) ?? []
        case let .action(action):
            leaveExploreConfirmation(action, &state)
            // Every action is enabled in some mode; the parts below check they are in it.
            if let effects = screen(message, &state) { return effects }  // quit, help and the tabs: in every mode
            // The one switch on the mode; within browse, the one switch on the tab.
            switch state.mode {
            case .outcome where action == .bugReport, .sending where action == .bugReport: return draftReport(&state)  // R on the write shown
            case .form, .confirm, .sending, .outcome: return dialogAction(action, &state)
            case .filter: return filterAction(action, &state)
            case .help:
                if action == .back { state.screen.showHelp = false }
                return []
            case .diff: return diffAction(action, &state)
            case .prompt: return promptAction(action, &state)
            case .browse: return browseAction(action, &state)
            }
        }
    }

    /// Keys on a tab with nothing over it: what every tab shares, then the tab's own (Esc closes what
    /// the tab has open, else the notice).
    static func browseAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        switch action {
        case .refresh:
            state.steps.add("refreshed (r)")
            // On the Purchases tab, `r` reads the ledger again as well.
            return refresh(&state) + (state.screen.tab == .purchases ? readLedger(&state) : [])
        case .back:
            // A search stops first, whichever tab is shown.
            if let stopped = stopSearches(&state) { return stopped }
        case .switchUser: return beginUserSwitch(&state)
        case .watch: return toggleWatch(&state)
        case .compare: return beginCompare(&state)
        case .snapshot: return saveSnapshot(&state)
        case .fault: return beginFault(&state)
        case .explore: return explore(&state)
        case .spend, .buy: return beginAction(action, &state)
        default:
            if let effects = evidenceAction(action, &state) { return effects }
        }
        switch state.screen.tab {
        case .shop: return packsAction(action, &state)
        case .history: return historyAction(action, &state)
        case .requests: return requestsAction(action, &state)
        case .checks:
            if action == .back { state.notice = nil }
            _ = state.checks.list.move(action, page: state.screen.pageSize)
            return []
        case .live:
            if action == .back { state.notice = nil }
            _ = state.watch.timeline.move(action, page: state.screen.pageSize)
            return []
        case .purchases: return purchasesAction(action, &state)
        case .session: return sessionAction(action, &state)
        }
    }

    /// Text typed into the focused field.
    static func typed(_ c: Character, _ state: inout AppState) -> [Effect] {
        switch state.mode {
        case .filter:
            setPackFilter(state.packs.filter + String(c), &state)
            return []
        case .form:
            editField(&state) { $0.append(c) }
            return []
        case .prompt:
            state.screen.prompt?.text.append(c)
            return []
        default:
            return []
        }
    }

    static func clamp(_ index: Int, count: Int) -> Int {
        min(max(0, index), max(0, count - 1))
    }

    /// A selection moved by `action` in a list of `count` rows; nil for an action that is not a move.
    static func moved(_ index: Int, by action: Action, count: Int, page: Int) -> Int? {
        switch action {
        case .down: return clamp(index + 1, count: count)
        case .up: return clamp(index - 1, count: count)
        case .pageDown: return clamp(index + page, count: count)
        case .pageUp: return clamp(index - page, count: count)
        case .first: return 0
        case .last: return clamp(count - 1, count: count)
        default: return nil
        }
    }
}
