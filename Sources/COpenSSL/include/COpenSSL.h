#ifndef IAPCTL_COPENSSL_H
#define IAPCTL_COPENSSL_H
#include <openssl/opensslv.h>
#if OPENSSL_VERSION_MAJOR < 3
#error "iapctl needs OpenSSL 3 (libssl-dev >= 3.0)"
#endif
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/cms.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pkcs7.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#endif
