// The command framework is part of this module's API (handlers take an `Invocation`, tests build
// sinks and readers): one import here makes it visible to every file and to importers.
@_exported import CommandLineKit
