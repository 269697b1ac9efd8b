import Foundation
import ShopAPI
import ShopLedger

// The purchase form's read of the App Store's record of its transaction (as `buy` reads it, `AppStorePaid`):
// the form's expectation and credit come from it.
extension ShopUpdate {
    /// Reads the App Store's record of the purchase form's transaction; the form is submitted again once it
    /// is in (`appStoreRecordRead`).
    static func readAppStoreRecord(_ id: String, form: ActionState.Form, _ state: inout AppState) -> [Effect] {
        state.write.action?.readingRecord = id
        state.write.action?.phase = .editing(form, note: .readingRecord(id))
        return [.readAppStoreRecord(transactionID: id)]
    }

    /// The App Store's record is in: kept with the form, which is submitted again when it still names that
    /// transaction (a form closed or changed meanwhile drops it).
    static func appStoreRecordRead(_ record: AppStoreRecordRead, _ state: inout AppState) -> [Effect] {
        guard state.write.action?.readingRecord == record.transactionID, case let .editing(form, _)? = state.write.action?.phase else { return [] }
        state.write.action?.readingRecord = nil
        state.write.action?.record = record
        state.steps.add(record.words)
        state.write.action?.phase = .editing(form, note: nil)
        return submit(&state)
    }
}
