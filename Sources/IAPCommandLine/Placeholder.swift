#if canImport(Glibc)
import Glibc
#endif

public func runIAPCtl(arguments: [String]) -> Int32 { 70 }
public func exitProcess(with code: Int32) -> Never { exit(code) }
