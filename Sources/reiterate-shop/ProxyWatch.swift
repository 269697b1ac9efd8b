import ArgumentParser
import Foundation
import Logging
import ShopAPI
import ShopProbes
import ShopProxy
import ShopSettings
import ShopViewModels
import TerminalText

extension ProxyRun {
    /// `proxy --watch`: the proxy on the client's own pipeline, and the watch of `--user` pairing the
    /// app's writes with its reads. Lines of both (the proxy's exchanges, the watch's timeline) on stdout.
    func runWatching(settings: ResolvedSettings, logger: Logger) async throws {
        let setup: ProxySetup
        do {
            setup = try ProxySetup.make(settings: settings, listen: listen, environment: connection.environment, faults: ServerFaults.parse(faults))
        } catch {
            throw fail(error)
        }
        let started = Date()
        let printer = ProxyPrinter(json: json, count: nil, lines: .standard)
        let json = json, strict = strict, count = count, seconds = duration.flatMap(WatchCommand.seconds)
        let result: (WatchOutcome, ProxyStats.Counts, String)? = try await connection.withClient(settings, logger: logger) { client in
            var watch = settings.watchState
            if isatty(STDERR_FILENO) != 1 { watch.alert = nil }
            let store = await AppStore(state: AppState(context: settings.shopContext, watch: watch), service: LiveShopService(client: client), cache: nil)
            let watcher = await Watcher(store: store, json: json, strict: strict, count: count, seconds: seconds, lines: .standard,
                                        alert: WatchCommand.alert)
            // The app's writes to the watch, every one, in order; every event to the printer, through a
            // bounded queue (a flood of refusals, or a stalled stdout, holds at most this many lines).
            let feed = await AppWriteFeed(store: store)
            let (lines, sink) = AsyncStream<ProxyEvent>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
            let printing = Task { @MainActor in
                for await event in lines {
                    _ = printer.write(event)
                    // --strict ends at the first finding of either kind: the watch's, or the contract's on the app's traffic.
                    if strict, case .exchange(let e) = event, !e.findings.isEmpty { watcher.end("a finding, with --strict") }
                }
            }
            let server: ProxyServer
            do {
                server = try await ProxyServer.start(configuration: setup.configuration, ca: setup.ca, transport: setup.transport, pipeline: client.pipeline,
                                                     events: { event in
                                                         sink.yield(event)
                                                         feed.take(event)
                                                     })
            } catch let error as ProxyStartError {
                try? await setup.transport.shutdown()
                Terminal.err("error: \(Sanitizer.line(error.description))\n")
                return nil
            }
            for line in setup.notes(listening: server.address) { Terminal.err("note: \(line)\n") }
            let status = ProxyStatus(address: server.address.description, intercepting: setup.configuration.interceptedHosts.map(\.description))
            await MainActor.run { store.send(.proxy(.listening(status))) }
            let outcome = await watcher.run()
            await server.stop()
            await feed.stop()
            sink.finish()
            await printing.value
            try? await setup.transport.shutdown()
            return (outcome, server.stats.current, server.address.description)
        }
        guard let (outcome, c, address) = result else { throw ExitCode(ExitStatus.unavailable.rawValue) }
        let plural = { (n: Int, word: String) in "\(Wording.grouped(n)) \(word)\(n == 1 ? "" : "s")" }
        Terminal.err("note: proxy on \(address) watching \(Sanitizer.line(settings.user)) for \(Wording.duration(Date().timeIntervalSince(started))): "
                     + "\(plural(c.exchanges, "app exchange")), \(plural(c.findings, "finding")) on them; \(plural(outcome.events, "watch event")), "
                     + "\(plural(outcome.findings, "watch finding")), \(plural(outcome.rounds, "round"))\(outcome.why.map { " (\($0))" } ?? "")\n")
        try outcome.requireARound()
        if strict, c.findings + outcome.findings > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
    }
}
