import ArgumentParser
import ShopAPI
import Testing
@testable import reiterate_shop

/// `fail`: the one `error:` line and the exit status of a command's failure.
@Suite struct FailTests {
    struct Unforeseen: Error {}

    /// An error no branch knows is this program's failure: EX_SOFTWARE (70), not the server's 1.
    @Test func anUnknownErrorIsASoftwareFailure() {
        #expect(fail(Unforeseen()).rawValue == ExitStatus.software.rawValue)
        #expect(ExitStatus.software.rawValue == 70)
    }

    /// The known ones keep their statuses.
    @Test func knownErrorsKeepTheirStatuses() {
        #expect(fail(CLIError(message: "x", exitCode: .usage)).rawValue == 64)
        #expect(fail(ValidationError("--history-pages takes 0 to 100000")).rawValue == 78)
    }
}
