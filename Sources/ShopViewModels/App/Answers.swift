import Foundation
import ShopAPI

// Answer routing: every answer, reply and withdrawal of a request goes through the table of requests in
// flight (InFlight.swift) to the part that asked for it, by its purpose. The one place an answer is
// routed; each part's own handling is in its file.

extension ShopUpdate {
    /// An answer (or a cancellation) whose token is still in the table, with what it was for.
    static func answered(_ purpose: Purpose, _ message: Message, _ state: inout AppState) -> [Effect] {
        switch (purpose, message) {
        case let (_, .cancelled(token)):
            return withdrawn(purpose, token, &state)
        case let (.cacheRead, .cacheLoaded(_, balance, packs, firstPage)):
            applyCache(balance: balance, packs: packs, firstPage: firstPage, &state)
            return []
        case let (_, .answered(token, reply)): return replied(purpose, token, reply, &state) ?? []
        case (.watchWake, .woke): return watchWoke(&state) + liveLedger(&state)
        case (.verificationWake, .woke): return verificationWoke(&state)
        case (.balanceWake, .woke): return loadBalance(&state)
        case let (.compare, .compared(_, result)): return compared(result, &state)
        default:
            return []  // an answer of another kind than was asked: no store sends one
        }
    }

    /// A shop request's reply, handed to what its purpose was (nil: an answer of another kind than
    /// was asked, which no service sends).
    static func replied(_ purpose: Purpose, _ token: Token, _ reply: ShopReply, _ state: inout AppState) -> [Effect]? {
        let at = reply.answeredAt
        switch purpose {
        case .balance: return reply.value(\.balance).map { balanceLoaded(token, $0, at: at, requestID: reply.requestID, &state) }
        case .packs: return reply.value(\.packs).map { packsLoaded(token, $0, at: at, requestID: reply.requestID, &state) }
        case let .historyPage(page): return reply.value(\.history).map { pageLoaded(page, token, $0, at: at, &state) }
        case let .findScan(page): return reply.value(\.history).map { scanLoaded(page, $0, &state) }
        case .verificationHistory:
            return reply.value(\.history).map { verificationHistory($0, requestID: reply.requestID, &state) }
        case .write: return reply.value(\.balance).map { actionFinished($0, at: at, requestID: reply.requestID, &state) }
        case let .watch(read): return watchLoaded(read, reply, &state)
        case .cacheRead, .watchWake, .verificationWake, .balanceWake, .compare: return nil
        }
    }

    /// Cancels the request out for `purpose`, if one is.
    static func cancel(_ purpose: Purpose, _ state: inout AppState) -> [Effect] {
        cancelRequests(&state) { $0 == purpose }
    }

    /// Cancels the requests `which` selects, oldest first: each leaves the table or its resource
    /// (which goes back to what it showed before), and the store is told to stop it (its late
    /// answer is stale).
    static func cancelRequests(_ state: inout AppState, where which: (Purpose) -> Bool) -> [Effect] {
        let out = state.requestsOut.filter { which($0.value) }.sorted { $0.key < $1.key }
        return out.flatMap { token, purpose in
            _ = state.inFlight.settle(token)
            return [.cancel(token)] + withdrawn(purpose, token, &state)
        }
    }

    /// A request that will not answer: what waited for it stops waiting.
    static func withdrawn(_ purpose: Purpose, _ token: Token, _ state: inout AppState) -> [Effect] {
        let unread = "the read was cancelled"
        switch purpose {
        case .cacheRead: break
        case .balance:
            state.balance.withdrawn()
            if state.write.verification?.balanceRead == token {
                if state.write.verification?.isBaseline == true { return abortBaseline(unread, &state) }
                return verificationUnread(.balance, unread, &state)
            }
        case .packs:
            state.packs.list.withdrawn()
            if state.write.verification?.packsRead == token {
                if state.write.verification?.isBaseline == true { return abortBaseline(unread, &state) }
                return verificationUnread(.packs, unread, &state)
            }
        case let .historyPage(page): pageWithdrawn(page, &state)
        case .findScan:
            guard state.history.find?.scan != nil else { break }
            state.history.find?.scan = nil
            state.notice = Notice(.info, "Find stopped")
        case .verificationHistory:
            if state.write.verification?.isBaseline == true { return abortBaseline(unread, &state) }
            return verificationUnread(.history, unread, &state)
        case .verificationWake:
            // A baseline's pause cancelled (a quit, a stop): the write is not sent.
            if state.write.verification?.isBaseline == true { return abortBaseline("the reads before it were cancelled", &state) }
            // The pause was cancelled: judge on the reads so far.
            if state.write.verification?.readsAreIn == true { return concludeVerification(&state) }
        case .write: actionCancelled(&state)
        case .balanceWake: state.balanceReads = []
        case .watchWake, .watch: break  // cancelled by a stop, a switch or a quit: they say what comes next
        case .compare: break
        }
        return []
    }
}
