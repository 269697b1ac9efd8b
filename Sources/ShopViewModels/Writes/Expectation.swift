import Foundation
import ShopAPI

/// A cheer bundle the environment sells: its App Store product id and the cheer it credits (the
/// environment's `bundles = [...]`; the stand-in's by default). A purchase's expected credit is read
/// here, never from the identifier typed.
public struct CheerBundle: Equatable, Sendable {
    public var identifier: String
    public var cheer: Int

    public init(identifier: String, cheer: Int) {
        self.identifier = identifier
        self.cheer = cheer
    }

    /// The stand-in's bundles: `com.reiterate.cheer.N` credits N.
    public static let standIn: [CheerBundle] = [50, 100, 200, 500, 1000, 2500, 5000].map {
        CheerBundle(identifier: "com.reiterate.cheer.\($0)", cheer: $0)
    }
}

/// Why the shop must refuse a write, from the shop's own data (the bundles the environment sells, the
/// packs and the balance read from the server) and the contract (`amount` has minimum 1) — never from
/// the words typed.
public enum ExpectedRefusal: Equatable, Sendable {
    /// A purchase of an identifier that is not among the environment's bundles.
    case notABundle(identifier: String)
    /// A spend on a product that is not in the pack list read from the server.
    case unknownPack(product: String)
    /// A spend above the balance read before it.
    case overspend(amount: Int, balance: Int)
    /// A spend of 0 or less (the contract's `amount` has minimum 1).
    case notPositive(amount: Int)
    /// A purchase whose transaction id is not the contract's whole number from 0 to 2⁶⁴ − 1 (sent as
    /// typed: a negative number, or text).
    case transactionNotWhole(TransactionID)
    /// A purchase whose transaction the App Store's verified record says was refunded or revoked.
    case revokedInAppStore(TransactionID)
    /// A purchase posted for another product than the one the App Store's verified record says was paid.
    case otherProductInAppStore(paid: String, sent: String)

    /// In plain words: `105 cheer is more than the balance (100 cheer)`.
    public var reason: String {
        let g = Wording.grouped
        switch self {
        case let .notABundle(identifier): return "“\(identifier)” is not a bundle this environment sells"
        case let .unknownPack(product): return "“\(product)” is not in the pack list"
        case let .overspend(amount, balance): return "\(g(amount)) cheer is more than the balance (\(g(balance)) cheer)"
        case let .notPositive(amount): return "an amount of \(g(amount)) is below the contract's minimum of 1"
        case let .transactionNotWhole(id): return "the transaction id \(id) is not a whole number from 0 to 18446744073709551615"
        case let .revokedInAppStore(id): return "the App Store's record says transaction \(id) was refunded"
        case let .otherProductInAppStore(paid, sent): return "the App Store's record says \(paid) was paid, not \(sent)"
        }
    }
}

/// What the shop must do with a write, as known before it is sent.
public enum WriteExpectation {
    /// The refusals the shop owes this write (empty: it should be taken). `balance` is the live
    /// balance read before (nil: not known, no overspend is expected); `packs` the identifiers of the
    /// live pack list (nil: not read, or a pack in it could not be read — no pack is called unknown).
    public static func refusals(_ kind: ShopWrite, balance: Int?, packs: [String]?, bundles: [CheerBundle]) -> [ExpectedRefusal] {
        switch kind {
        case let .spend(spend):
            let (product, amount) = (spend.product, spend.amount)
            var out: [ExpectedRefusal] = []
            if amount < 1 { out.append(.notPositive(amount: amount)) }
            if let packs, !packs.contains(product) { out.append(.unknownPack(product: product)) }
            if let balance, amount >= 1, amount > balance { out.append(.overspend(amount: amount, balance: balance)) }
            return out
        case let .purchase(purchase):
            let (identifier, transactionID) = (purchase.identifier, purchase.transactionID)
            var out: [ExpectedRefusal] = credit(identifier, bundles: bundles) == nil ? [.notABundle(identifier: identifier)] : []
            if case .number = transactionID {} else { out.append(.transactionNotWhole(transactionID)) }
            // What the App Store's verified record says (read before the write, never typed): a refunded
            // transaction, or one of another product, is not to be credited.
            if let paid = purchase.paid {
                if paid.revoked { out.append(.revokedInAppStore(transactionID)) }
                if paid.product != identifier { out.append(.otherProductInAppStore(paid: paid.product, sent: identifier)) }
            }
            return out
        }
    }

    /// The cheer a purchase of `identifier` credits: the environment's bundle of that id, else nil.
    public static func credit(_ identifier: String, bundles: [CheerBundle]) -> Int? {
        bundles.first { $0.identifier == identifier }?.cheer
    }

    /// The cheer `purchase` must credit: what the App Store's record says was paid (its product's bundle ×
    /// its quantity) when it was read, else the bundle of the identifier sent.
    public static func credit(of purchase: ShopWrite.Purchase, bundles: [CheerBundle]) -> Int? {
        guard let paid = purchase.paid else { return credit(purchase.identifier, bundles: bundles) }
        return credit(paid.product, bundles: bundles).map { $0.multipliedReportingOverflow(by: max(0, paid.quantity)).partialValue }
    }
}

extension AppState {
    /// The refusals the shop owes `kind` by what this state holds live (what `spend`/`buy` check
    /// before sending, unless `--unchecked`).
    public func expectedRefusals(_ kind: ShopWrite) -> [ExpectedRefusal] { ShopUpdate.expectedRefusals(kind, self) }

    /// A pack's name as the shop lists it (nil: not listed, or no product).
    public func packName(_ product: String?) -> String? {
        product.flatMap { p in packs.all.first { $0.identifier == p }?.name }
    }
}

extension AppState {
    /// What the spend form checks an amount against, and when it was read: `checked against the balance
    /// 1,250 cheer, read 12 s ago` (only a live balance is: a cached one expects nothing). The write's own
    /// baseline is read again, by the one settled-read rule, before it is sent.
    public func formBalanceWords(now: Date) -> String {
        guard let known = balance.shown else { return "the balance is not read yet: the amount is checked against none" }
        let amount = Wording.grouped(known.value) + " cheer"
        switch known.source {
        case .live: return "checked against the balance: \(amount), read \(Wording.age(of: known.at, now: now))"
        case .cached: return "the balance \(amount) is a cached one (\(Wording.age(of: known.at, now: now))): the amount is checked against none until it is read (r)"
        }
    }
}

extension ShopUpdate {
    /// The refusals the shop owes `kind`, from what the state holds live (a cached balance or pack
    /// list, or a pack list with unreadable packs, expects nothing: no finding is invented).
    static func expectedRefusals(_ kind: ShopWrite, _ state: AppState) -> [ExpectedRefusal] {
        let balance = state.balance.source == .live ? state.balance.value : nil
        let packs = state.packs.source == .live && state.packs.unreadable.isEmpty ? state.packs.all.map(\.identifier) : nil
        return WriteExpectation.refusals(kind, balance: balance, packs: packs, bundles: state.context.bundles)
    }
}
