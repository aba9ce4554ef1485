// The payload models carry `JSONValue`s and the verifier's texts use `Timestamp`: whoever uses
// AppStoreJWS sees those basics too.
@_exported import IAPFoundation
