import Foundation
import ShopAPI
import TerminalText

public enum PackSort: String, CaseIterable, Equatable, Sendable {
    case shopOrder = "shop order", name, price, cheer = "cheer total"

    public var next: PackSort {
        let all = PackSort.allCases
        return all[((all.firstIndex(of: self) ?? 0) + 1) % all.count]
    }
}

/// The Audio Pack list: what came, and how it is filtered and sorted.
public struct PacksState: Equatable, Sendable {
    /// The list as loaded (its request, when one is out, is in the table of requests in flight).
    public internal(set) var list = Loadable<AudioPackList>.idle
    public var filter = ""
    public var sort: PackSort = .shopOrder
    /// The packs shown: `all` filtered and sorted (kept in step by the update function), and the
    /// selected one.
    public internal(set) var shown = SelectableList<AudioPack>()

    public init() {}

    public var all: [AudioPack] { list.value?.packs ?? [] }
    public var unreadable: [UnreadableEntry] { list.value?.unreadable ?? [] }
    public var source: DataSource? { list.source }

    /// `55 of 56 packs (1 unreadable)`: the packs shown of every pack the server sent, readable or not
    /// (an unreadable pack is one of them, never dropped from the count).
    public var countText: String {
        let sent = all.count + unreadable.count
        var text = "\(Wording.grouped(shown.count)) of \(Wording.grouped(sent)) pack\(sent == 1 ? "" : "s")"
        if !unreadable.isEmpty { text += " (\(Wording.grouped(unreadable.count)) unreadable)" }
        return text
    }

    /// Recomputes `shown`, keeping the selected pack selected when it is still shown.
    mutating func refresh() {
        let needle = Self.fold(filter.trimmingCharacters(in: .whitespaces))
        var packs = needle.isEmpty ? all : all.filter { pack in
            ([pack.name, pack.creator ?? "", pack.identifier] + (pack.tags ?? [])).contains { Self.fold($0).contains(needle) }
        }
        switch sort {
        case .shopOrder: break
        case .name: packs.sort { Self.fold($0.name) < Self.fold($1.name) }
        case .price: packs.sort { ($0.priceCents ?? 0, Self.fold($0.name)) < ($1.priceCents ?? 0, Self.fold($1.name)) }
        case .cheer: packs.sort { ($0.cheerTotal ?? 0, Self.fold($1.name)) > ($1.cheerTotal ?? 0, Self.fold($0.name)) }
        }
        shown.replace(with: packs) { $0.identifier }
    }

    /// Case- and diacritic-insensitive form for matching and ordering.
    static func fold(_ s: String) -> String {
        s.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }
}

extension ShopUpdate {
    static func packsAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        if let index = moved(state.packs.shown.selectedIndex, by: action, count: state.packs.shown.count, page: state.screen.pageSize) {
            selectPack(index, &state)
            return []
        }
        switch action {
        case .back:
            // Esc clears the filter, else the notice.
            if state.packs.filter.isEmpty { state.notice = nil } else { setPackFilter("", &state) }
        case .filter: state.screen.editingFilter = true
        case .sort:
            state.packs.sort = state.packs.sort.next
            state.packs.refresh()
            state.steps.add("sorted the packs by \(state.packs.sort.rawValue)")
        default: break
        }
        return []
    }

    static func filterAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        switch action {
        case .keepFilter:
            state.screen.editingFilter = false
            state.steps.add(state.packs.filter.isEmpty ? "cleared the pack filter" : "filtered the packs by “\(Sanitizer.line(state.packs.filter))”")
        case .clearFilter:
            state.screen.editingFilter = false
            if !state.packs.filter.isEmpty { state.steps.add("cleared the pack filter") }
            setPackFilter("", &state)
        case .deleteChar: setPackFilter(String(state.packs.filter.dropLast()), &state)
        case .down, .up:
            selectPack(state.packs.shown.selectedIndex + (action == .down ? 1 : -1), &state)
        default: break
        }
        return []
    }

    /// Selects the pack at `index` (clamped); a new selection is one step that follows it.
    static func selectPack(_ index: Int, _ state: inout AppState) {
        let before = state.packs.shown.selected
        state.packs.shown.select(index)
        if let pack = state.packs.shown.selected, pack != before {
            state.steps.add("selected the pack “\(Sanitizer.line(pack.name))”", replacing: .packMove)
        }
    }

    static func setPackFilter(_ text: String, _ state: inout AppState) {
        state.packs.filter = text
        state.packs.refresh()
    }

    static func loadPacks(_ state: inout AppState) -> [Effect] {
        guard !state.packs.list.isLoading else { return [] }  // coalesced with the request in flight
        let token = state.newToken()
        state.packs.list.asked(token)
        return [.request(token, .packs)]
    }

    /// Reloads the packs even when a request is out (that one was asked before a write changed the totals).
    static func reloadPacks(_ state: inout AppState) -> [Effect] {
        cancel(.packs, &state) + loadPacks(&state)
    }

    /// The packs request's answer (the table has already told it from a stale one).
    static func packsLoaded(_ token: Token, _ result: Result<AudioPackList, ShopAPIError>, at: Date, requestID: String? = nil,
                            _ state: inout AppState) -> [Effect] {
        let verifying = verificationPacks(token, result, requestID: requestID, &state)
        switch result {
        case let .success(list):
            recovered(AudioPacks.endpoint, &state)
            state.packs.list.succeeded(list, at: at)
            state.packs.refresh()
            return [.writePacks(key: state.context.shopKey, list, fetchedAt: at)] + verifying
        case let .failure(error):
            state.packs.list.failed(error, reason: ErrorText.staleReason(error))
            state.notice = .error(error, state.context)
            return verifying
        }
    }
}
