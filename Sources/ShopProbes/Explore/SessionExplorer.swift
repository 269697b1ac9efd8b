import Foundation
import ShopAPI
import ShopViewModels

/// The TUI's explore (`X`): the same campaign as `reiterate-shop explore --yes`, over the session's client (its
/// requests on the Requests tab, the watchdog's findings on them on the Checks tab), its cases' findings told as
/// each case ends, its files in the state folder. Stopped by cancelling its task, never by a signal.
public struct SessionExplorer: Explorer {
    let client: ShopClient
    let cases: [ExploreCase]
    let omitted: [ExploreOmission]
    let inputs: ExploreInputs
    let reader: String
    let expiredToken: String?
    /// Where each run's folder goes (`ExploreFiles.defaultFolder`: one a run, by its time).
    let stateDirectory: String
    let files: ExploreFiles
    let pace: Double
    let budget: Int
    public let plan: String

    public init(client: ShopClient, inputs: ExploreInputs, reader: String, expiredToken: String?, stateDirectory: String, files: ExploreFiles,
                pace: Double = 10, budget: Int = 400) {
        self.stateDirectory = stateDirectory
        self.client = client
        self.inputs = inputs
        self.reader = reader
        self.expiredToken = expiredToken
        self.files = files
        self.pace = pace
        self.budget = budget
        (cases, omitted) = ExploreCase.catalogue(inputs)
        plan = "\(cases.count) cases as \(reader), at most \(budget) requests, \(Int(pace)) a second; " + ExploreListing.writes(cases, bundles: inputs.bundles, writer: inputs.writers.first)
    }

    public func explore(tell: @escaping @Sendable (ExploreNews) async -> Void) async -> ExploreDone {
        var files = self.files
        files.folder = ExploreFiles.defaultFolder(stateDirectory: stateDirectory, environment: files.environment)
        var campaign = ExploreCampaign.on(client, pace: pace, budget: budget, reader: reader, writer: inputs.writers.first, bundles: inputs.bundles,
                                          expiredToken: expiredToken, files: files, lines: OutputLines(out: { _ in }, err: { _ in }), json: false, progress: false)
        campaign.catchesSignals = false
        campaign.news = { outcome, done, total in
            await tell(ExploreNews(done: done, total: total, name: outcome.exploreCase.name, findings: outcome.findings, at: Date()))
        }
        do {
            let result = try await campaign.go(cases, omitted: omitted, budget: budget)
            return ExploreDone(summary: result.summary.line, folder: files.folder, stopped: Task.isCancelled)
        } catch let notStarted as ExploreRun.NotStarted {
            return ExploreDone(summary: "", folder: nil, stopped: false, failure: notStarted.words)
        } catch {
            return ExploreDone(summary: "", folder: nil, stopped: Task.isCancelled, failure: Task.isCancelled ? "stopped before its first case" : "the campaign could not run")
        }
    }
}
