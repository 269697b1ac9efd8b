import Foundation
import ShopAPI
import ShopModel
import TerminalText

/// Where a user was, kept while another user is looked at (`u`): switching back returns there.
public struct UserPlace: Equatable, Sendable {
    public var cursor: Int
    public var expanded: Set<EntryKey>
    public var totalCount: Int?
    public var totalPages: Int?
    var lostPurchase: ShopWrite.Purchase?
}

extension ShopUpdate {
    /// `u`: the user prompt (Tab goes through the environment's `users`).
    static func beginUserSwitch(_ state: inout AppState) -> [Effect] {
        guard refuseIfBusy(&state) else { return [] }
        guard state.write.verification == nil else {
            state.notice = Notice(.error, "The last write is still being checked; switch users when its checks are done.")
            return []
        }
        state.screen.prompt = PromptState(kind: .user)
        return []
    }

    /// Tab in the user prompt: the next user of the environment's list after the one typed.
    static func completeUser(_ state: inout AppState) {
        guard var prompt = state.screen.prompt, prompt.kind == .user else { return }
        let users = state.context.users.filter { $0 != state.context.user }
        guard !users.isEmpty else { return }
        let next = users.firstIndex(of: prompt.text).map { (users.index(after: $0)) % users.count } ?? 0
        prompt.text = users[next]
        state.screen.prompt = prompt
    }

    /// Looks at `user` from now on: the header changes at once, the cached balance shows first, and
    /// each user's history position is kept apart (switching back returns to it). Requests still out
    /// for the user left are cancelled; nothing of theirs reaches the new user's screen.
    static func switchUser(to raw: String, _ state: inout AppState) -> [Effect] {
        let user = raw.trimmingCharacters(in: .whitespaces)
        guard !user.isEmpty else { return [] }
        guard user.allSatisfy({ !$0.isWhitespace && !$0.isNewline }), user.count <= 128 else {
            state.notice = Notice(.error, "A user id is one word, not “\(Sanitizer.line(raw))”")
            return []
        }
        guard user != state.context.user else {
            state.notice = Notice(.info, "Already looking at \(user).")
            return []
        }
        // Whatever is out for the user left is no longer wanted: one operation on the table.
        let effects = cancelRequests(&state) { $0.isPerUser }
        state.steps.add("switched to user \(user) (u)")
        let old = state.context.user
        state.userPlaces[old] = UserPlace(cursor: state.history.cursor, expanded: state.history.expanded, totalCount: state.history.totalCount,
                                          totalPages: state.history.totalPages, lostPurchase: state.write.lostPurchase)
        state.context.user = user
        state.balance = .idle
        state.write.outcome = nil
        state.lastError = nil  // a bug report after the switch is not about the user left
        var history = HistoryState(perPage: state.history.perPage, capacity: state.history.pages.capacity)
        let place = state.userPlaces[user]
        if let place {
            history.cursor = place.cursor
            history.expanded = place.expanded
            history.totalCount = place.totalCount
            history.totalPages = place.totalPages
        }
        state.history = history
        state.write.lostPurchase = place?.lostPurchase
        state.write.timeline = Timeline()  // the new user's comes from the cache (`timelineLoaded`)
        state.notice = Notice(.info, place == nil ? "Now looking at \(user)." : "Back to \(user), where you were.")
        // The cached balance and first page first (the header shows them at once), then the live ones.
        let read = Effect.readCache(state.ask(.cacheRead), user: state.context.userKey, shop: state.context.shopKey)
        let loads = loadBalance(&state) + loadVisiblePages(&state)
        return effects + [.sequence([read, .batch(loads)])] + moveWatch(&state)
    }
}
