import ArgumentParser
import Foundation
import ShopAPI
import ShopProbes
import ShopSettings
import ShopViewModels
import TerminalText

/// A `session` subcommand: it keeps the session's record itself (`ReiterateShop.finish` appends no command line for it).
protocol SessionPart {}

/// `reiterate-shop session`: one record of a test session, shared by every command and the TUI (issue 46; docs/sessions.md).
struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "A test session: one record of everything done while it is open, closed into a bundle, diffed between builds.",
        discussion: """
            While a session is open, every command and the TUI append to it: exchanges, findings, notes,
            files written. `ledger` with no --read-har judges its purchases. Kept in STATE/test-sessions/.
            """,
        subcommands: [Start.self, Show.self, Note.self, Close.self, Diff.self, List.self]
    )

    struct Start: AsyncParsableCommand, SessionPart {
        static let configuration = CommandConfiguration(abstract: "Open a session (refused while one is open).")
        @Option(help: "Its name (default: session).") var name: String?
        @Option(help: "The build under test, e.g. 1.4.3 (42).") var build: String?
        @Option(help: "What it sets out to test, e.g. \"purchases after a refund\".") var charter: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            let settings = try connection.settings()
            let sessions = TestSessions(environment: connection.environment)
            do {
                let session = try sessions.start(name: name, build: build, charter: charter, environment: settings.environment, baseURL: settings.baseURL, user: settings.user)
                Terminal.out("session \(Sanitizer.line(name ?? "session")) started (\(session.id)) on \(settings.environment.uppercased()) as \(Sanitizer.line(settings.user)): "
                             + "every command and the TUI append to it until `reiterate-shop session close`\n")
                Terminal.err("note: its record is \(Sanitizer.line(session.folder))/\(SessionJournal.recordName)\n")
            } catch {
                throw fail(CLIError(message: error.words, exitCode: .usage))
            }
        }
    }

    struct Show: AsyncParsableCommand, SessionPart {
        static let configuration = CommandConfiguration(abstract: "A session's findings by kind and blame, its purchases, notes, what it covered and its timeline.")
        @Argument(help: "Its name, id or folder (default: the open one, else the latest).") var session: String?
        @Flag(help: "One JSON object.") var json = false

        func run() async throws {
            let summary = SessionSummary(try SessionCommand.record(session))
            Terminal.out(json ? summary.json + "\n" : summary.text())
        }
    }

    struct Note: AsyncParsableCommand, SessionPart {
        static let configuration = CommandConfiguration(abstract: "Add a note to the open session.")
        @Argument(help: "The note.") var text: [String]

        func run() async throws {
            guard let journal = TestSessions(environment: ProcessInfo.processInfo.environment).journal(command: "note") else {
                throw fail(CLIError(message: "no session is open: start one (reiterate-shop session start --name NAME)", exitCode: .usage))
            }
            journal.note(text.joined(separator: " "))
            if journal.failed { throw fail(CLIError(message: "the note could not be added to the session's record", exitCode: .software)) }
        }
    }

    struct Close: AsyncParsableCommand, SessionPart {
        static let configuration = CommandConfiguration(abstract: "Close the open session into a bundle: HAR, Markdown report, curl lines, replay cases, its record; a folder and one archive.")

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let sessions = TestSessions(environment: environment)
            // The curl lines name the token's variable of the session's environment (a broken config is a setting).
            let meta = sessions.current().flatMap { SessionRecord.read(folder: $0.folder)?.meta }
            let settings: ResolvedSettings
            do {
                let config = try ConfigFile.load(path: ConfigFile.defaultPath(environment: environment))
                settings = try ResolvedSettings.resolve(flags: .init(env: meta.map { config?.environments[$0.environment] == nil && $0.environment != "local" ? nil : $0.environment } ?? nil),
                                                        environment: environment, config: config)
            } catch {
                throw fail(CLIError(message: error.description, exitCode: .config))
            }
            do {
                let closed = try sessions.closeCurrent(tokenVariable: settings.tokenEnv, secrets: TestSessions.secrets(environment, settings: settings))
                Terminal.out(closed.lines.map { $0 + "\n" }.joined())
            } catch {
                throw fail(CLIError(message: error.words, exitCode: .usage))
            }
        }
    }

    struct Diff: AsyncParsableCommand, SessionPart {
        static let configuration = CommandConfiguration(abstract: "Two sessions side by side: findings new, fixed and still there (by kind and subject), purchases whose verdict changed. Exit 65 when one is new.")
        @Argument(help: "The earlier session (name, id or folder).") var a: String
        @Argument(help: "The later session.") var b: String
        @Flag(help: "One JSON object.") var json = false

        func run() async throws {
            let diff = SessionDiff(try SessionCommand.record(a), try SessionCommand.record(b))
            Terminal.out(json ? diff.json + "\n" : diff.text())
            if diff.hasNew { throw ExitCode(ExitStatus.dataError.rawValue) }
        }
    }

    struct List: AsyncParsableCommand, SessionPart {
        static let configuration = CommandConfiguration(abstract: "Every session, oldest first.")
        func run() async throws { Terminal.out(TestSessions(environment: ProcessInfo.processInfo.environment).listText()) }
    }

    /// The session `given` names, read.
    static func record(_ given: String?) throws -> SessionRecord {
        do { return try TestSessions(environment: ProcessInfo.processInfo.environment).read(given) } catch {
            throw fail(CLIError(message: error.words, exitCode: .usage))
        }
    }
}
