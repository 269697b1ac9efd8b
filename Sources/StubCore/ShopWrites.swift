extension ShopStore {
    /// Ways a faulty write breaks the shop's rules (the stand-in's faults; none by default).
    public enum WriteQuirk: Sendable, Hashable {
        /// A spend recorded twice in the history (debited once).
        case recordTwice
        /// A spend that records no history entry.
        case noEntry
        /// A spend that debits nothing.
        case noDebit
        /// A spend that leaves its pack's cheer total where it was.
        case stuckTotal
        /// A purchase that credits its bundle twice.
        case creditTwice
        /// A purchase that credits nothing and records no transaction, answered as if it had.
        case noCredit
        /// A write applied as asked, answered with the balance from before it.
        case staleAnswer
    }

    /// Rules a lenient stand-in does not keep (the lenient faults: each takes one kind of write the shop
    /// must refuse, so that `reiterate-shop negative` can be tested both ways).
    public enum Leniency: Sendable, Hashable {
        /// A spend on a product not in the pack list.
        case unknownProduct
        /// A spend above the balance (the balance goes below zero).
        case overspend
        /// A spend of 0 or less.
        case nonPositiveAmount
        /// A write for a user the shop does not know, applied to qa-alice.
        case unknownUser
        /// A purchase of any identifier ending in `.N` credits N.
        case anyBundle
        /// A purchase whose transaction id was already credited is credited again.
        case replayedTransaction
    }

    /// What a write taken by the shop did.
    public struct WriteOutcome: Sendable, Equatable {
        /// The writer's balance before the write.
        public var before: Int
        /// The writer's balance after it: what the next read shows.
        public var after: Int
        /// The balance the shop answers: `after`, unless a quirk says otherwise.
        public var answer: Int
        /// The rules it broke, of those it was allowed to.
        public var broke: Set<Leniency>
        /// The quirks that changed the write or its answer, of those asked for.
        public var took: Set<WriteQuirk>
    }
}
