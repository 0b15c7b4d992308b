// Code that imports only Lupine sees URLRequest, HTTPURLResponse and friends, as with Alamofire.
// NIO is deliberately not re-exported: their HTTPHeaders and HTTPMethod
// would make the same names in user code ambiguous.
#if canImport(FoundationNetworking)
@_exported import FoundationNetworking
#endif
@_exported import Foundation
