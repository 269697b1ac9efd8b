// Platform floor for the first frame (make bench): a Swift program that links only the standard
// library (no Foundation) and prints one line. Built static (`swiftc -O -static-stdlib`), it shows
// what loading and starting the Swift runtime alone costs on this machine.
#if canImport(Glibc)
import Glibc
#endif

print(CommandLine.arguments.dropFirst().joined(separator: " "))
sleep(5)
