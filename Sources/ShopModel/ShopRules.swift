/// The shop's rules that the contract states in words, as functions of the shop's data (never of what a
/// user typed). The contract document stays the source of shapes and statuses; these say what an answer
/// must be, given what was read.
public enum ShopRules {
    /// What the shop owes a spend of `amount` by the balance: `402 insufficient_balance` only when the
    /// balance is below the amount ("a balance never below zero"; the contract's 402).
    public enum SpendByBalance: Equatable, Sendable {
        /// The balance covers the amount: the spend must not be refused for the balance.
        case covered
        /// The balance is below the amount: 402.
        case insufficient
    }

    public static func spend(amount: Int, balance: Int) -> SpendByBalance {
        balance >= amount ? .covered : .insufficient
    }

    /// Whether a 402 refusal of a spend of `amount` is founded on the balances read before and after it
    /// (reads that agree: both must cover the amount for the refusal to be wrong; a balance that dropped
    /// meanwhile, another writer's, judges nothing). Nil: not judged (a balance not read).
    public static func refusalForBalanceIsFounded(amount: Int, before: Int?, after: Int?) -> Bool? {
        guard let before, let after else { return nil }
        if spend(amount: amount, balance: before) == .covered, spend(amount: amount, balance: after) == .covered { return false }
        if spend(amount: amount, balance: before) == .insufficient, spend(amount: amount, balance: after) == .insufficient { return true }
        return nil
    }
}
