import AppStoreRecord
import Foundation
import ShopAPI
import ShopLedger
import ShopSettings
import ShopViewModels

/// The Purchases tab's reader: the App Store read as `ledger` reads it, against the session's purchase
/// exchanges (this tool's own and the app's through the proxy). The customer's history starts from the
/// table's `transaction`, else from the ids the session posted.
public struct TUILedgerReader: LedgerReader {
    let settings: ResolvedSettings

    public init(settings: ResolvedSettings) { self.settings = settings }

    public func readLedger(exchanges: [Exchange]) async -> Result<LedgerView, LedgerFailure> {
        // The open test session's (every command's, the app's), then this TUI's own not in it yet.
        let events = SessionLedger.merged(SessionLedger.sessionEvents(TestSessions(environment: ProcessInfo.processInfo.environment)).events,
                                          ShopEvents.from(exchanges.reversed()))  // the state keeps them newest first
        let candidates = LedgerSources.candidates(given: settings.appStore?.transaction.map { [$0] } ?? [], events: events)
        guard let anchor = candidates.first else {
            return .failure(LedgerFailure("no purchase seen yet: buy (b), let the app buy through the proxy, or set transaction in the [appstore] table"))
        }
        let setup: AppStoreSetup
        do {
            setup = try AppStoreSetup(settings)
        } catch {
            return .failure(LedgerFailure(error.words))
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

    public func appStoreRecord(_ transactionID: String) async -> AppStoreRecordRead {
        do { return try await AppStoreSetup.record(transactionID, settings: settings) } catch {
            let why = error.words
            return AppStoreRecordRead(transactionID: transactionID, paid: nil,
                                      line: "warning: the App Store's record of \(transactionID) could not be read: \(why); the credit expected is the bundle's\n")
        }
    }
}
