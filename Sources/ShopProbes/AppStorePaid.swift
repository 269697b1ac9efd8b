import AppStoreRecord
import Foundation
import ShopAPI
import TerminalText

/// What the App Store's record of a transaction says was paid, for `buy` (out of the executable, issue 44):
/// believed only once verified; a record that cannot say (unknown, not believed, not readable) says so,
/// and the credit expected is then the bundle's.
public enum AppStorePaid {
    /// What was paid (nil when the record cannot say), and the `note:` or `warning:` line that says it.
    public static func read(_ client: AppStoreClient, id: String) async -> (paid: ShopWrite.Purchase.Paid?, line: String) {
        switch await client.transaction(id) {
        case let .success(.verified(t)?):
            let line = "note: the App Store's record of \(id): \(t.quantity) × \(Sanitizer.line(t.productID))"
                + (t.isRevoked ? ", refunded: the shop must refuse to credit it\n" : "; the credit expected comes from it\n")
            return (ShopWrite.Purchase.Paid(product: t.productID, quantity: t.quantity, revoked: t.isRevoked), line)
        case .success(nil):
            return (nil, "warning: the App Store does not know transaction \(id): a backend that verifies must refuse it\n")
        case let .success(.notVerified(why)?):
            return (nil, "warning: the App Store's record of \(id) is not believed: \(Sanitizer.line(why.words))\n")
        case let .failure(failure):
            return (nil, "warning: the App Store's record of \(id) could not be read: \(Sanitizer.line(failure.words)); the credit expected is the bundle's\n")
        }
    }
}
