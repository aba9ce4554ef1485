// The command framework is part of this module's API (handlers take an `Invocation`, tests build
// sinks and readers), and so are the use-case modules the handlers call (split out of
// IAPOperations): one import here makes them visible to every file and to importers.
@_exported import AppleFlows
@_exported import ClientSubmissions
@_exported import CommandLineKit
@_exported import IAPOperations
@_exported import ItemInput
@_exported import PersonalData
