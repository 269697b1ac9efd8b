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
        var candidates: [String] = []
        let learned = events.compactMap { event -> String? in
            if case let .number(n)? = event.purchase?.transactionID { String(n) } else { nil }
        }
        for id in (settings.appStore?.transaction.map { [$0] } ?? []) + learned where !candidates.contains(id) { candidates.append(id) }
        guard !candidates.isEmpty else {
            return .failure(LedgerFailure("no purchase seen yet: buy (b), let the app buy through the proxy, or set transaction in the [appstore] table"))
        }
        let setup: AppStoreSetup
        do {
            setup = try AppStoreSetup(settings)
        } catch let error as CLIError {
            return .failure(LedgerFailure(error.message))
        } catch {
            return .failure(LedgerFailure("the App Store client could not start"))
        }
        let outcome = await LedgerCommand.read(client: setup.client, candidates: Array(candidates.prefix(LedgerCommand.maxCandidates)), events: events)
        await setup.close()
        switch outcome {
        case let .failure(failure):
            return .failure(LedgerFailure(failure.words))
        case let .success(read):
            let ledger = read.judge(events, settings: settings)
            var transactions: [String: AppStoreTransaction] = [:]
            let looked = read.lookups.values.compactMap { lookup -> AppStoreTransaction? in
                if case let .record(.verified(t)) = lookup { t } else { nil }
            }
            for t in (read.history.records + read.refunds.records).compactMap(\.transaction) + looked where transactions[t.transactionID]?.isRevoked != true {
                transactions[t.transactionID] = t
            }
            return .success(LedgerView(ledger: ledger, transactions: transactions, events: events, anchor: candidates[0], readAt: Date()))
        }
    }
}
