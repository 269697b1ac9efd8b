import Foundation
import ShopAPI

public enum PackSort: String, CaseIterable, Equatable, Sendable {
    case shopOrder = "shop order", name, price, cheer = "cheer total"

    public var next: PackSort {
        let all = PackSort.allCases
        return all[((all.firstIndex(of: self) ?? 0) + 1) % all.count]
    }
}

/// The Audio Pack list: what came, how it is filtered and sorted, and the request out for it.
public struct PacksState: Equatable, Sendable {
    public enum Status: Equatable, Sendable {
        case idle, loading, loaded, failed(String)
    }

    public var all: [AudioPack] = []
    public var unreadable: [UnreadableEntry] = []
    public var status: Status = .idle
    public var source: DataSource?
    public var fetchedAt: Date?
    /// The request whose answer is wanted.
    public internal(set) var pending: Token?
    public var filter = ""
    public var sort: PackSort = .shopOrder
    /// The packs shown: `all` filtered and sorted (kept in step by the update function).
    public private(set) var visible: [AudioPack] = []
    public var selectedIndex = 0

    public init() {}

    public var isLoading: Bool { pending != nil }

    public var selected: AudioPack? { visible.indices.contains(selectedIndex) ? visible[selectedIndex] : nil }

    /// Recomputes `visible`, keeping the selected pack selected when it is still shown.
    mutating func refresh() {
        let keep = selected?.identifier
        let needle = Self.fold(filter.trimmingCharacters(in: .whitespaces))
        var shown = needle.isEmpty ? all : all.filter { pack in
            ([pack.name, pack.creator ?? "", pack.identifier] + (pack.tags ?? [])).contains { Self.fold($0).contains(needle) }
        }
        switch sort {
        case .shopOrder: break
        case .name: shown.sort { Self.fold($0.name) < Self.fold($1.name) }
        case .price: shown.sort { ($0.priceCents ?? 0, Self.fold($0.name)) < ($1.priceCents ?? 0, Self.fold($1.name)) }
        case .cheer: shown.sort { ($0.cheerTotal ?? 0, Self.fold($1.name)) > ($1.cheerTotal ?? 0, Self.fold($0.name)) }
        }
        visible = shown
        if let keep, let index = shown.firstIndex(where: { $0.identifier == keep }) {
            selectedIndex = index
        } else {
            selectedIndex = min(max(0, selectedIndex), max(0, shown.count - 1))
        }
    }

    /// Case- and diacritic-insensitive form for matching and ordering.
    static func fold(_ s: String) -> String {
        s.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }
}

extension ShopUpdate {
    static func packsAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        if let index = moved(state.packs.selectedIndex, by: action, count: state.packs.visible.count, page: state.screen.pageSize) {
            state.packs.selectedIndex = index
            return []
        }
        switch action {
        case .filter: state.screen.editingFilter = true
        case .sort:
            state.packs.sort = state.packs.sort.next
            state.packs.refresh()
        default: break
        }
        return []
    }

    static func filterAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        switch action {
        case .keepFilter: state.screen.editingFilter = false
        case .clearFilter:
            state.screen.editingFilter = false
            setPackFilter("", &state)
        case .deleteChar: setPackFilter(String(state.packs.filter.dropLast()), &state)
        case .down, .up:
            state.packs.selectedIndex = clamp(state.packs.selectedIndex + (action == .down ? 1 : -1), count: state.packs.visible.count)
        default: break
        }
        return []
    }

    static func setPackFilter(_ text: String, _ state: inout AppState) {
        state.packs.filter = text
        state.packs.refresh()
    }

    static func loadPacks(_ state: inout AppState) -> [Effect] {
        guard !state.packs.isLoading else { return [] }
        let token = state.newToken()
        state.packs.pending = token
        if state.packs.all.isEmpty { state.packs.status = .loading }
        return [.fetchPacks(token)]
    }

    /// Reloads the packs even when a request is out (that one was asked before a write changed the totals).
    static func reloadPacks(_ state: inout AppState) -> [Effect] {
        let stale = state.packs.pending.map { [Effect.cancel($0)] } ?? []
        state.packs.pending = nil
        return stale + loadPacks(&state)
    }

    static func packsLoaded(_ message: Message, _ state: inout AppState) -> [Effect] {
        guard case let .packsLoaded(token, result, at) = message, token == state.packs.pending else { return [] }
        state.packs.pending = nil
        defer { verificationPacks(token, result, &state) }
        switch result {
        case let .success(list):
            recovered(AudioPacks.endpoint, &state)
            state.packs.all = list.packs
            state.packs.unreadable = list.unreadable
            state.packs.status = .loaded
            state.packs.source = .live
            state.packs.fetchedAt = at
            state.packs.refresh()
            return [.writePacks(key: state.context.shopKey, list, fetchedAt: at)]
        case let .failure(error):
            if state.packs.all.isEmpty {
                state.packs.status = .failed(ErrorText.line(error))
            } else {
                state.packs.source = .cached(reason: ErrorText.staleReason(error))
            }
            state.notice = .error(error, state.context)
            return []
        }
    }
}
