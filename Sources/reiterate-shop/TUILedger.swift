import AppStoreRecord
import Foundation
import ShopAPI
import ShopLedger
import ShopSettings
import ShopViewModels

/// The Purchases tab's reader: the App Store read as `ledger` reads it, against the session's purchase
/// exchanges (this tool's own and the app's through the proxy). The customer's history starts from the
/// table's `transaction`, else from the ids the session posted.
struct TUILedgerReader: LedgerReader {
    let settings: ResolvedSettings

    func readLedger(exchanges: [Exchange]) async -> Result<LedgerView, LedgerFailure> {
        let events = ShopEvents.from(exchanges.reversed())  // the state keeps them newest first
        let candidates = LedgerSources.candidates(given: settings.appStore?.transaction.map { [$0] } ?? [], events: events)
        guard let anchor = candidates.first else {
            return .failure(LedgerFailure("no purchase seen yet: buy (b), let the app buy through the proxy, or set transaction in the [appstore] table"))
        }
        let setup: AppStoreSetup
        switch self.setup() {
        case let .success(made): setup = made
        case let .failure(failure): return .failure(failure)
        }
        let outcome = await LedgerSources.read(client: setup.client, candidates: candidates, events: events)
        await setup.close()
        switch outcome {
        case let .failure(failure):
            return .failure(LedgerFailure(failure.words))
        case let .success(read):
            return .success(LedgerView(ledger: read.judge(events, catalog: settings.cheerByProduct), transactions: read.transactions, events: events,
                                       anchor: anchor, readAt: Date()))
        }
    }

    func appStoreRecord(_ transactionID: String) async -> AppStoreRecordRead {
        switch setup() {
        case let .failure(failure):
            return AppStoreRecordRead(transactionID: transactionID, paid: nil,
                                      line: "warning: the App Store's record of \(transactionID) could not be read: \(failure.message); the credit expected is the bundle's\n")
        case let .success(setup):
            let record = await AppStorePaid.read(setup.client, id: transactionID)
            await setup.close()
            return record
        }
    }

    private func setup() -> Result<AppStoreSetup, LedgerFailure> {
        do {
            return .success(try AppStoreSetup(settings))
        } catch let error as CLIError {
            return .failure(LedgerFailure(error.message))
        } catch {
            return .failure(LedgerFailure("the App Store client could not start"))
        }
    }
}
