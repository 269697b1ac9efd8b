import AppStoreRecord
import Foundation
import ShopAPI
import TerminalText

/// What the App Store's record of one transaction said, read before a purchase is sent (`buy` and the TUI's
/// purchase form alike): what was paid, once the record verified, and the line that says it.
public struct AppStoreRecordRead: Equatable, Sendable {
    /// The transaction it is the record of.
    public var transactionID: String
    /// What was paid; nil when the record cannot say (unknown, not believed, not readable): the credit
    /// expected is then the bundle's.
    public var paid: ShopWrite.Purchase.Paid?
    /// `note: the App Store's record of 2000000123: 2 × com.reiterate.cheer.200; …` or a `warning:`, with its newline.
    public var line: String

    public init(transactionID: String, paid: ShopWrite.Purchase.Paid?, line: String) {
        self.transactionID = transactionID
        self.paid = paid
        self.line = line
    }

    /// The line without its `note: ` or `warning: ` and newline, for a dialog: `the App Store's record of …`.
    public var words: String {
        var text = line.hasSuffix("\n") ? String(line.dropLast()) : line
        for prefix in ["note: ", "warning: "] where text.hasPrefix(prefix) { text = String(text.dropFirst(prefix.count)) }
        return text
    }
}

/// What the App Store's record of a transaction says was paid: believed only once verified; a record that
/// cannot say (unknown, not believed, not readable) says so, and the credit expected is then the bundle's.
public enum AppStorePaid {
    public static func read(_ client: AppStoreClient, id: String) async -> AppStoreRecordRead {
        let shown = Sanitizer.line(id)
        switch await client.transaction(id) {
        case let .success(.verified(t)?):
            let line = "note: the App Store's record of \(shown): \(t.quantity) × \(Sanitizer.line(t.productID))"
                + (t.isRevoked ? ", refunded: the shop must refuse to credit it\n" : "; the credit expected comes from it\n")
            return AppStoreRecordRead(transactionID: id, paid: ShopWrite.Purchase.Paid(product: t.productID, quantity: t.quantity, revoked: t.isRevoked), line: line)
        case .success(nil):
            return AppStoreRecordRead(transactionID: id, paid: nil, line: "warning: the App Store does not know transaction \(shown): a backend that verifies must refuse it\n")
        case let .success(.notVerified(why)?):
            return AppStoreRecordRead(transactionID: id, paid: nil, line: "warning: the App Store's record of \(shown) is not believed: \(Sanitizer.line(why.words))\n")
        case let .failure(failure):
            return AppStoreRecordRead(transactionID: id, paid: nil,
                                      line: "warning: the App Store's record of \(shown) could not be read: \(Sanitizer.line(failure.words)); the credit expected is the bundle's\n")
        }
    }
}
