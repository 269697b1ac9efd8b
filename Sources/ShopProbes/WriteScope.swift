import Foundation
import ShopAPI

// `spend` and `buy`: which findings are the write's, out of the executable (issue 44, item 5).

/// Which findings are about a write: those on its own answer, and on the reads it depends on — every
/// balance read; for a spend, the history page's newest entry and its paging, and the pack list's
/// entry for the pack spent on (and the list as a whole). The rest (another entry of the page, another
/// pack; for a purchase the packs and the history) are about other reads.
public struct WriteScope: Sendable {
    let kind: ShopWrite
    /// The pack list as read (to find the pack's position among the packs sent).
    let packs: AudioPackList?

    public init(kind: ShopWrite, packs: AudioPackList?) {
        self.kind = kind
        self.packs = packs
    }

    /// The exchanges twice, each with the findings of one side only.
    public func split(_ exchanges: [Exchange]) -> (own: [Exchange], others: [Exchange]) {
        var own: [Exchange] = [], others: [Exchange] = []
        for exchange in exchanges {
            var mine = exchange, theirs = exchange
            mine.findings = exchange.findings.filter { isAboutWrite($0, in: exchange) }
            theirs.findings = exchange.findings.filter { !isAboutWrite($0, in: exchange) }
            own.append(mine)
            others.append(theirs)
        }
        return (own, others)
    }

    public func isAboutWrite(_ finding: Finding, in exchange: Exchange) -> Bool {
        guard let operation = exchange.operation else { return true }
        switch (operation, kind) {
        case (.spendCheer, _), (.purchaseCheer, _), (.getBalance, _), (.refreshToken, _): return true
        case (.listAudioPacks, .purchase), (.getCheerHistory, .purchase): return false
        case (.getCheerHistory, .spend): return Self.item(of: finding, in: "history").map { $0 == 0 } ?? true
        case let (.listAudioPacks, .spend(spend)): return Self.item(of: finding, in: "packs").map { $0 == position(of: spend.product) } ?? true
        }
    }

    /// The position among the packs sent of `product` (readable or not); nil when it is not there.
    func position(of product: String) -> Int? {
        guard let packs else { return nil }
        let unreadable = Dictionary(packs.unreadable.map { ($0.index, $0.id) }, uniquingKeysWith: { a, _ in a })
        var readable = packs.packs.makeIterator()
        for i in 0..<(packs.packs.count + packs.unreadable.count) {
            if let id = unreadable[i] {
                if id == product { return i }
            } else if readable.next()?.identifier == product {
                return i
            }
        }
        return nil
    }

    /// `3` for a finding at `history[3]…`; nil for one about the answer as a whole.
    static func item(of finding: Finding, in array: String) -> Int? {
        guard case let .field(path, _)? = finding.place, path.hasPrefix(array + "[") else { return nil }
        return Int(path.dropFirst(array.count + 1).prefix { $0.isNumber })
    }
}
