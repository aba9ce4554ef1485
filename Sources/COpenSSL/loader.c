/* libcrypto (OpenSSL 3, Debian's libssl3) loaded with dlopen on first use, not linked (issue 25).

   Every libcrypto function iapctl, jwsforge and the tests call is defined here under its own name,
   with the prototype of the OpenSSL headers (the compiler checks each against them), as a call
   through a pointer looked up in libcrypto.so.3 the first time any of them is called. `iapctl
   --version`, `help` and the other commands that never hash or verify do not pay for loading and
   relocating libcrypto (~2.6 M instructions and ~120 page faults of each start). The definitions
   are hidden: nothing outside the executable binds to them (libcurl's own libcrypto does not).
   When libcrypto.so.3 or one of the functions cannot be found, the process stops with exit 70
   and a message naming the library and the package to install.

   The list and the definitions are generated: after using a new OpenSSL function (the link then
   fails with "undefined reference to X"), run `scripts/crypto-loader X`. */
#include "COpenSSL.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __APPLE__
#define IAPCTL_CRYPTO_LIBRARY "libcrypto.3.dylib"
#else
#define IAPCTL_CRYPTO_LIBRARY "libcrypto.so.3"
#endif

static const char *const iapctl_crypto_names[] = {
    "ASN1_INTEGER_free",
    "ASN1_INTEGER_get",
    "ASN1_OBJECT_free",
    "ASN1_OCTET_STRING_free",
    "ASN1_OCTET_STRING_new",
    "ASN1_OCTET_STRING_set",
    "ASN1_STRING_get0_data",
    "ASN1_STRING_length",
    "ASN1_STRING_to_UTF8",
    "ASN1_TIME_set",
    "ASN1_TIME_to_tm",
    "BIO_ctrl",
    "BIO_ctrl_pending",
    "BIO_free",
    "BIO_new",
    "BIO_new_mem_buf",
    "BIO_read",
    "BIO_s_mem",
    "BIO_s_null",
    "BN_bin2bn",
    "BN_bn2binpad",
    "BN_free",
    "BN_new",
    "BN_rand",
    "BN_to_ASN1_INTEGER",
    "CMS_ContentInfo_free",
    "CMS_get0_SignerInfos",
    "CMS_get0_content",
    "CMS_get0_eContentType",
    "CMS_get0_signers",
    "CMS_get0_type",
    "CMS_get1_certs",
    "CMS_verify",
    "CRYPTO_free",
    "ECDSA_SIG_free",
    "ECDSA_SIG_get0_r",
    "ECDSA_SIG_get0_s",
    "ECDSA_SIG_new",
    "ECDSA_SIG_set0",
    "ERR_clear_error",
    "ERR_error_string_n",
    "ERR_get_error",
    "EVP_DigestSign",
    "EVP_DigestSignInit",
    "EVP_DigestVerify",
    "EVP_DigestVerifyInit",
    "EVP_MD_CTX_copy_ex",
    "EVP_MD_CTX_free",
    "EVP_MD_CTX_new",
    "EVP_MD_fetch",
    "EVP_MD_free",
    "EVP_PKEY_CTX_free",
    "EVP_PKEY_CTX_new",
    "EVP_PKEY_CTX_new_from_name",
    "EVP_PKEY_CTX_set_group_name",
    "EVP_PKEY_CTX_set_rsa_keygen_bits",
    "EVP_PKEY_free",
    "EVP_PKEY_generate",
    "EVP_PKEY_get0_type_name",
    "EVP_PKEY_get_base_id",
    "EVP_PKEY_get_bits",
    "EVP_PKEY_get_group_name",
    "EVP_PKEY_get_utf8_string_param",
    "EVP_PKEY_keygen_init",
    "EVP_PKEY_sign",
    "EVP_PKEY_sign_init",
    "EVP_PKEY_up_ref",
    "EVP_sha256",
    "EVP_sha384",
    "OBJ_obj2nid",
    "OBJ_obj2txt",
    "OBJ_txt2obj",
    "OPENSSL_sk_free",
    "OPENSSL_sk_new_null",
    "OPENSSL_sk_num",
    "OPENSSL_sk_push",
    "OPENSSL_sk_value",
    "PEM_read_bio_PrivateKey",
    "PEM_read_bio_X509",
    "PEM_write_bio_PrivateKey",
    "PEM_write_bio_X509",
    "PKCS7_free",
    "SHA1",
    "SHA256",
    "X509V3_EXT_nconf_nid",
    "X509V3_set_ctx",
    "X509_ALGOR_cmp",
    "X509_ALGOR_get0",
    "X509_EXTENSION_create_by_OBJ",
    "X509_EXTENSION_free",
    "X509_EXTENSION_get_critical",
    "X509_EXTENSION_get_data",
    "X509_EXTENSION_get_object",
    "X509_NAME_ENTRY_get_data",
    "X509_NAME_add_entry_by_txt",
    "X509_NAME_free",
    "X509_NAME_get_entry",
    "X509_NAME_get_index_by_NID",
    "X509_NAME_new",
    "X509_NAME_oneline",
    "X509_STORE_CTX_free",
    "X509_STORE_CTX_get0_chain",
    "X509_STORE_CTX_get0_param",
    "X509_STORE_CTX_get_current_cert",
    "X509_STORE_CTX_get_error",
    "X509_STORE_CTX_get_error_depth",
    "X509_STORE_CTX_init",
    "X509_STORE_CTX_new",
    "X509_STORE_CTX_set_error",
    "X509_STORE_CTX_set_flags",
    "X509_STORE_CTX_set_time",
    "X509_STORE_CTX_set_verify_cb",
    "X509_STORE_add_cert",
    "X509_STORE_free",
    "X509_STORE_new",
    "X509_VERIFY_PARAM_clear_flags",
    "X509_VERIFY_PARAM_set_flags",
    "X509_VERIFY_PARAM_set_time",
    "X509_add_ext",
    "X509_check_private_key",
    "X509_cmp",
    "X509_digest",
    "X509_free",
    "X509_get0_notAfter",
    "X509_get0_notBefore",
    "X509_get0_pubkey",
    "X509_get_ext",
    "X509_get_ext_by_OBJ",
    "X509_get_ext_count",
    "X509_get_issuer_name",
    "X509_get_subject_name",
    "X509_getm_notAfter",
    "X509_getm_notBefore",
    "X509_new",
    "X509_set_issuer_name",
    "X509_set_pubkey",
    "X509_set_serialNumber",
    "X509_set_subject_name",
    "X509_set_version",
    "X509_sign",
    "X509_supported_extension",
    "X509_verify_cert",
    "X509_verify_cert_error_string",
    "d2i_CMS_ContentInfo",
    "d2i_ECDSA_SIG",
    "d2i_PKCS7",
    "d2i_X509",
    "i2d_ECDSA_SIG",
    "i2d_X509",
};
#define IAPCTL_CRYPTO_COUNT (sizeof iapctl_crypto_names / sizeof iapctl_crypto_names[0])
static void *iapctl_crypto_table[IAPCTL_CRYPTO_COUNT];

static void iapctl_crypto_refuse(const char *what) {
    fprintf(stderr,
        "error: cannot load the OpenSSL library (" IAPCTL_CRYPTO_LIBRARY "%s%s) that hashing and signature "
        "checks need: install Debian's libssl3\n",
        what ? ": no " : "", what ? what : "");
    exit(70);
}

static void iapctl_crypto_fill(void) {
    void *library = dlopen(IAPCTL_CRYPTO_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!library) iapctl_crypto_refuse(NULL);
    for (size_t i = 0; i < IAPCTL_CRYPTO_COUNT; i++) {
        if (!(iapctl_crypto_table[i] = dlsym(library, iapctl_crypto_names[i]))) iapctl_crypto_refuse(iapctl_crypto_names[i]);
    }
    /* OpenSSL's first initialisation, before any other call: no clean-up handler at exit (OpenSSL
       would free every table it built just before the process ends: 1.2 M instructions, 2.7 % of a
       one-shot `iapctl verify`, issue 25). Nothing else changes: openssl.cnf, the providers and the
       error strings are loaded as before, by the first call that needs them. */
    int (*initialise)(uint64_t, const OPENSSL_INIT_SETTINGS *) =
        (int (*)(uint64_t, const OPENSSL_INIT_SETTINGS *))dlsym(library, "OPENSSL_init_crypto");
    if (!initialise) iapctl_crypto_refuse("OPENSSL_init_crypto");
    if (!initialise(OPENSSL_INIT_NO_ATEXIT, NULL)) iapctl_crypto_refuse("OPENSSL_init_crypto");
}

/* Function `index` of the list, loading the library on the first call. */
static void *iapctl_crypto(size_t index) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, iapctl_crypto_fill);
    return iapctl_crypto_table[index];
}

#define IAPCTL_HIDDEN __attribute__((visibility("hidden")))
IAPCTL_HIDDEN void ASN1_INTEGER_free(ASN1_INTEGER *a0) { ((__typeof__(&ASN1_INTEGER_free))iapctl_crypto(0))(a0); }
IAPCTL_HIDDEN long int ASN1_INTEGER_get(const ASN1_INTEGER *a0) { return ((__typeof__(&ASN1_INTEGER_get))iapctl_crypto(1))(a0); }
IAPCTL_HIDDEN void ASN1_OBJECT_free(ASN1_OBJECT *a0) { ((__typeof__(&ASN1_OBJECT_free))iapctl_crypto(2))(a0); }
IAPCTL_HIDDEN void ASN1_OCTET_STRING_free(ASN1_OCTET_STRING *a0) { ((__typeof__(&ASN1_OCTET_STRING_free))iapctl_crypto(3))(a0); }
IAPCTL_HIDDEN ASN1_OCTET_STRING *ASN1_OCTET_STRING_new(void) { return ((__typeof__(&ASN1_OCTET_STRING_new))iapctl_crypto(4))(); }
IAPCTL_HIDDEN int ASN1_OCTET_STRING_set(ASN1_OCTET_STRING *a0, const unsigned char *a1, int a2) { return ((__typeof__(&ASN1_OCTET_STRING_set))iapctl_crypto(5))(a0, a1, a2); }
IAPCTL_HIDDEN const unsigned char *ASN1_STRING_get0_data(const ASN1_STRING *a0) { return ((__typeof__(&ASN1_STRING_get0_data))iapctl_crypto(6))(a0); }
IAPCTL_HIDDEN int ASN1_STRING_length(const ASN1_STRING *a0) { return ((__typeof__(&ASN1_STRING_length))iapctl_crypto(7))(a0); }
IAPCTL_HIDDEN int ASN1_STRING_to_UTF8(unsigned char **a0, const ASN1_STRING *a1) { return ((__typeof__(&ASN1_STRING_to_UTF8))iapctl_crypto(8))(a0, a1); }
IAPCTL_HIDDEN ASN1_TIME *ASN1_TIME_set(ASN1_TIME *a0, time_t a1) { return ((__typeof__(&ASN1_TIME_set))iapctl_crypto(9))(a0, a1); }
IAPCTL_HIDDEN int ASN1_TIME_to_tm(const ASN1_TIME *a0, struct tm *a1) { return ((__typeof__(&ASN1_TIME_to_tm))iapctl_crypto(10))(a0, a1); }
IAPCTL_HIDDEN long int BIO_ctrl(BIO *a0, int a1, long int a2, void *a3) { return ((__typeof__(&BIO_ctrl))iapctl_crypto(11))(a0, a1, a2, a3); }
IAPCTL_HIDDEN size_t BIO_ctrl_pending(BIO *a0) { return ((__typeof__(&BIO_ctrl_pending))iapctl_crypto(12))(a0); }
IAPCTL_HIDDEN int BIO_free(BIO *a0) { return ((__typeof__(&BIO_free))iapctl_crypto(13))(a0); }
IAPCTL_HIDDEN BIO *BIO_new(const BIO_METHOD *a0) { return ((__typeof__(&BIO_new))iapctl_crypto(14))(a0); }
IAPCTL_HIDDEN BIO *BIO_new_mem_buf(const void *a0, int a1) { return ((__typeof__(&BIO_new_mem_buf))iapctl_crypto(15))(a0, a1); }
IAPCTL_HIDDEN int BIO_read(BIO *a0, void *a1, int a2) { return ((__typeof__(&BIO_read))iapctl_crypto(16))(a0, a1, a2); }
IAPCTL_HIDDEN const BIO_METHOD *BIO_s_mem(void) { return ((__typeof__(&BIO_s_mem))iapctl_crypto(17))(); }
IAPCTL_HIDDEN const BIO_METHOD *BIO_s_null(void) { return ((__typeof__(&BIO_s_null))iapctl_crypto(18))(); }
IAPCTL_HIDDEN BIGNUM *BN_bin2bn(const unsigned char *a0, int a1, BIGNUM *a2) { return ((__typeof__(&BN_bin2bn))iapctl_crypto(19))(a0, a1, a2); }
IAPCTL_HIDDEN int BN_bn2binpad(const BIGNUM *a0, unsigned char *a1, int a2) { return ((__typeof__(&BN_bn2binpad))iapctl_crypto(20))(a0, a1, a2); }
IAPCTL_HIDDEN void BN_free(BIGNUM *a0) { ((__typeof__(&BN_free))iapctl_crypto(21))(a0); }
IAPCTL_HIDDEN BIGNUM *BN_new(void) { return ((__typeof__(&BN_new))iapctl_crypto(22))(); }
IAPCTL_HIDDEN int BN_rand(BIGNUM *a0, int a1, int a2, int a3) { return ((__typeof__(&BN_rand))iapctl_crypto(23))(a0, a1, a2, a3); }
IAPCTL_HIDDEN ASN1_INTEGER *BN_to_ASN1_INTEGER(const BIGNUM *a0, ASN1_INTEGER *a1) { return ((__typeof__(&BN_to_ASN1_INTEGER))iapctl_crypto(24))(a0, a1); }
IAPCTL_HIDDEN void CMS_ContentInfo_free(CMS_ContentInfo *a0) { ((__typeof__(&CMS_ContentInfo_free))iapctl_crypto(25))(a0); }
IAPCTL_HIDDEN struct stack_st_CMS_SignerInfo *CMS_get0_SignerInfos(CMS_ContentInfo *a0) { return ((__typeof__(&CMS_get0_SignerInfos))iapctl_crypto(26))(a0); }
IAPCTL_HIDDEN ASN1_OCTET_STRING **CMS_get0_content(CMS_ContentInfo *a0) { return ((__typeof__(&CMS_get0_content))iapctl_crypto(27))(a0); }
IAPCTL_HIDDEN const ASN1_OBJECT *CMS_get0_eContentType(CMS_ContentInfo *a0) { return ((__typeof__(&CMS_get0_eContentType))iapctl_crypto(28))(a0); }
IAPCTL_HIDDEN struct stack_st_X509 *CMS_get0_signers(CMS_ContentInfo *a0) { return ((__typeof__(&CMS_get0_signers))iapctl_crypto(29))(a0); }
IAPCTL_HIDDEN const ASN1_OBJECT *CMS_get0_type(const CMS_ContentInfo *a0) { return ((__typeof__(&CMS_get0_type))iapctl_crypto(30))(a0); }
IAPCTL_HIDDEN struct stack_st_X509 *CMS_get1_certs(CMS_ContentInfo *a0) { return ((__typeof__(&CMS_get1_certs))iapctl_crypto(31))(a0); }
IAPCTL_HIDDEN int CMS_verify(CMS_ContentInfo *a0, struct stack_st_X509 *a1, X509_STORE *a2, BIO *a3, BIO *a4, unsigned int a5) { return ((__typeof__(&CMS_verify))iapctl_crypto(32))(a0, a1, a2, a3, a4, a5); }
IAPCTL_HIDDEN void CRYPTO_free(void *a0, const char *a1, int a2) { ((__typeof__(&CRYPTO_free))iapctl_crypto(33))(a0, a1, a2); }
IAPCTL_HIDDEN void ECDSA_SIG_free(ECDSA_SIG *a0) { ((__typeof__(&ECDSA_SIG_free))iapctl_crypto(34))(a0); }
IAPCTL_HIDDEN const BIGNUM *ECDSA_SIG_get0_r(const ECDSA_SIG *a0) { return ((__typeof__(&ECDSA_SIG_get0_r))iapctl_crypto(35))(a0); }
IAPCTL_HIDDEN const BIGNUM *ECDSA_SIG_get0_s(const ECDSA_SIG *a0) { return ((__typeof__(&ECDSA_SIG_get0_s))iapctl_crypto(36))(a0); }
IAPCTL_HIDDEN ECDSA_SIG *ECDSA_SIG_new(void) { return ((__typeof__(&ECDSA_SIG_new))iapctl_crypto(37))(); }
IAPCTL_HIDDEN int ECDSA_SIG_set0(ECDSA_SIG *a0, BIGNUM *a1, BIGNUM *a2) { return ((__typeof__(&ECDSA_SIG_set0))iapctl_crypto(38))(a0, a1, a2); }
IAPCTL_HIDDEN void ERR_clear_error(void) { ((__typeof__(&ERR_clear_error))iapctl_crypto(39))(); }
IAPCTL_HIDDEN void ERR_error_string_n(long unsigned int a0, char *a1, size_t a2) { ((__typeof__(&ERR_error_string_n))iapctl_crypto(40))(a0, a1, a2); }
IAPCTL_HIDDEN long unsigned int ERR_get_error(void) { return ((__typeof__(&ERR_get_error))iapctl_crypto(41))(); }
IAPCTL_HIDDEN int EVP_DigestSign(EVP_MD_CTX *a0, unsigned char *a1, size_t *a2, const unsigned char *a3, size_t a4) { return ((__typeof__(&EVP_DigestSign))iapctl_crypto(42))(a0, a1, a2, a3, a4); }
IAPCTL_HIDDEN int EVP_DigestSignInit(EVP_MD_CTX *a0, EVP_PKEY_CTX **a1, const EVP_MD *a2, ENGINE *a3, EVP_PKEY *a4) { return ((__typeof__(&EVP_DigestSignInit))iapctl_crypto(43))(a0, a1, a2, a3, a4); }
IAPCTL_HIDDEN int EVP_DigestVerify(EVP_MD_CTX *a0, const unsigned char *a1, size_t a2, const unsigned char *a3, size_t a4) { return ((__typeof__(&EVP_DigestVerify))iapctl_crypto(44))(a0, a1, a2, a3, a4); }
IAPCTL_HIDDEN int EVP_DigestVerifyInit(EVP_MD_CTX *a0, EVP_PKEY_CTX **a1, const EVP_MD *a2, ENGINE *a3, EVP_PKEY *a4) { return ((__typeof__(&EVP_DigestVerifyInit))iapctl_crypto(45))(a0, a1, a2, a3, a4); }
IAPCTL_HIDDEN int EVP_MD_CTX_copy_ex(EVP_MD_CTX *a0, const EVP_MD_CTX *a1) { return ((__typeof__(&EVP_MD_CTX_copy_ex))iapctl_crypto(46))(a0, a1); }
IAPCTL_HIDDEN void EVP_MD_CTX_free(EVP_MD_CTX *a0) { ((__typeof__(&EVP_MD_CTX_free))iapctl_crypto(47))(a0); }
IAPCTL_HIDDEN EVP_MD_CTX *EVP_MD_CTX_new(void) { return ((__typeof__(&EVP_MD_CTX_new))iapctl_crypto(48))(); }
IAPCTL_HIDDEN EVP_MD *EVP_MD_fetch(OSSL_LIB_CTX *a0, const char *a1, const char *a2) { return ((__typeof__(&EVP_MD_fetch))iapctl_crypto(49))(a0, a1, a2); }
IAPCTL_HIDDEN void EVP_MD_free(EVP_MD *a0) { ((__typeof__(&EVP_MD_free))iapctl_crypto(50))(a0); }
IAPCTL_HIDDEN void EVP_PKEY_CTX_free(EVP_PKEY_CTX *a0) { ((__typeof__(&EVP_PKEY_CTX_free))iapctl_crypto(51))(a0); }
IAPCTL_HIDDEN EVP_PKEY_CTX *EVP_PKEY_CTX_new(EVP_PKEY *a0, ENGINE *a1) { return ((__typeof__(&EVP_PKEY_CTX_new))iapctl_crypto(52))(a0, a1); }
IAPCTL_HIDDEN EVP_PKEY_CTX *EVP_PKEY_CTX_new_from_name(OSSL_LIB_CTX *a0, const char *a1, const char *a2) { return ((__typeof__(&EVP_PKEY_CTX_new_from_name))iapctl_crypto(53))(a0, a1, a2); }
IAPCTL_HIDDEN int EVP_PKEY_CTX_set_group_name(EVP_PKEY_CTX *a0, const char *a1) { return ((__typeof__(&EVP_PKEY_CTX_set_group_name))iapctl_crypto(54))(a0, a1); }
IAPCTL_HIDDEN int EVP_PKEY_CTX_set_rsa_keygen_bits(EVP_PKEY_CTX *a0, int a1) { return ((__typeof__(&EVP_PKEY_CTX_set_rsa_keygen_bits))iapctl_crypto(55))(a0, a1); }
IAPCTL_HIDDEN void EVP_PKEY_free(EVP_PKEY *a0) { ((__typeof__(&EVP_PKEY_free))iapctl_crypto(56))(a0); }
IAPCTL_HIDDEN int EVP_PKEY_generate(EVP_PKEY_CTX *a0, EVP_PKEY **a1) { return ((__typeof__(&EVP_PKEY_generate))iapctl_crypto(57))(a0, a1); }
IAPCTL_HIDDEN const char *EVP_PKEY_get0_type_name(const EVP_PKEY *a0) { return ((__typeof__(&EVP_PKEY_get0_type_name))iapctl_crypto(58))(a0); }
IAPCTL_HIDDEN int EVP_PKEY_get_base_id(const EVP_PKEY *a0) { return ((__typeof__(&EVP_PKEY_get_base_id))iapctl_crypto(59))(a0); }
IAPCTL_HIDDEN int EVP_PKEY_get_bits(const EVP_PKEY *a0) { return ((__typeof__(&EVP_PKEY_get_bits))iapctl_crypto(60))(a0); }
IAPCTL_HIDDEN int EVP_PKEY_get_group_name(const EVP_PKEY *a0, char *a1, size_t a2, size_t *a3) { return ((__typeof__(&EVP_PKEY_get_group_name))iapctl_crypto(61))(a0, a1, a2, a3); }
IAPCTL_HIDDEN int EVP_PKEY_get_utf8_string_param(const EVP_PKEY *a0, const char *a1, char *a2, size_t a3, size_t *a4) { return ((__typeof__(&EVP_PKEY_get_utf8_string_param))iapctl_crypto(62))(a0, a1, a2, a3, a4); }
IAPCTL_HIDDEN int EVP_PKEY_keygen_init(EVP_PKEY_CTX *a0) { return ((__typeof__(&EVP_PKEY_keygen_init))iapctl_crypto(63))(a0); }
IAPCTL_HIDDEN int EVP_PKEY_sign(EVP_PKEY_CTX *a0, unsigned char *a1, size_t *a2, const unsigned char *a3, size_t a4) { return ((__typeof__(&EVP_PKEY_sign))iapctl_crypto(64))(a0, a1, a2, a3, a4); }
IAPCTL_HIDDEN int EVP_PKEY_sign_init(EVP_PKEY_CTX *a0) { return ((__typeof__(&EVP_PKEY_sign_init))iapctl_crypto(65))(a0); }
IAPCTL_HIDDEN int EVP_PKEY_up_ref(EVP_PKEY *a0) { return ((__typeof__(&EVP_PKEY_up_ref))iapctl_crypto(66))(a0); }
IAPCTL_HIDDEN const EVP_MD *EVP_sha256(void) { return ((__typeof__(&EVP_sha256))iapctl_crypto(67))(); }
IAPCTL_HIDDEN const EVP_MD *EVP_sha384(void) { return ((__typeof__(&EVP_sha384))iapctl_crypto(68))(); }
IAPCTL_HIDDEN int OBJ_obj2nid(const ASN1_OBJECT *a0) { return ((__typeof__(&OBJ_obj2nid))iapctl_crypto(69))(a0); }
IAPCTL_HIDDEN int OBJ_obj2txt(char *a0, int a1, const ASN1_OBJECT *a2, int a3) { return ((__typeof__(&OBJ_obj2txt))iapctl_crypto(70))(a0, a1, a2, a3); }
IAPCTL_HIDDEN ASN1_OBJECT *OBJ_txt2obj(const char *a0, int a1) { return ((__typeof__(&OBJ_txt2obj))iapctl_crypto(71))(a0, a1); }
IAPCTL_HIDDEN void OPENSSL_sk_free(OPENSSL_STACK *a0) { ((__typeof__(&OPENSSL_sk_free))iapctl_crypto(72))(a0); }
IAPCTL_HIDDEN OPENSSL_STACK *OPENSSL_sk_new_null(void) { return ((__typeof__(&OPENSSL_sk_new_null))iapctl_crypto(73))(); }
IAPCTL_HIDDEN int OPENSSL_sk_num(const OPENSSL_STACK *a0) { return ((__typeof__(&OPENSSL_sk_num))iapctl_crypto(74))(a0); }
IAPCTL_HIDDEN int OPENSSL_sk_push(OPENSSL_STACK *a0, const void *a1) { return ((__typeof__(&OPENSSL_sk_push))iapctl_crypto(75))(a0, a1); }
IAPCTL_HIDDEN void *OPENSSL_sk_value(const OPENSSL_STACK *a0, int a1) { return ((__typeof__(&OPENSSL_sk_value))iapctl_crypto(76))(a0, a1); }
IAPCTL_HIDDEN EVP_PKEY *PEM_read_bio_PrivateKey(BIO *a0, EVP_PKEY **a1, pem_password_cb (*a2), void *a3) { return ((__typeof__(&PEM_read_bio_PrivateKey))iapctl_crypto(77))(a0, a1, a2, a3); }
IAPCTL_HIDDEN X509 *PEM_read_bio_X509(BIO *a0, X509 **a1, pem_password_cb (*a2), void *a3) { return ((__typeof__(&PEM_read_bio_X509))iapctl_crypto(78))(a0, a1, a2, a3); }
IAPCTL_HIDDEN int PEM_write_bio_PrivateKey(BIO *a0, const EVP_PKEY *a1, const EVP_CIPHER *a2, const unsigned char *a3, int a4, pem_password_cb (*a5), void *a6) { return ((__typeof__(&PEM_write_bio_PrivateKey))iapctl_crypto(79))(a0, a1, a2, a3, a4, a5, a6); }
IAPCTL_HIDDEN int PEM_write_bio_X509(BIO *a0, const X509 *a1) { return ((__typeof__(&PEM_write_bio_X509))iapctl_crypto(80))(a0, a1); }
IAPCTL_HIDDEN void PKCS7_free(PKCS7 *a0) { ((__typeof__(&PKCS7_free))iapctl_crypto(81))(a0); }
IAPCTL_HIDDEN unsigned char *SHA1(const unsigned char *a0, size_t a1, unsigned char *a2) { return ((__typeof__(&SHA1))iapctl_crypto(82))(a0, a1, a2); }
IAPCTL_HIDDEN unsigned char *SHA256(const unsigned char *a0, size_t a1, unsigned char *a2) { return ((__typeof__(&SHA256))iapctl_crypto(83))(a0, a1, a2); }
IAPCTL_HIDDEN X509_EXTENSION *X509V3_EXT_nconf_nid(CONF *a0, X509V3_CTX *a1, int a2, const char *a3) { return ((__typeof__(&X509V3_EXT_nconf_nid))iapctl_crypto(84))(a0, a1, a2, a3); }
IAPCTL_HIDDEN void X509V3_set_ctx(X509V3_CTX *a0, X509 *a1, X509 *a2, X509_REQ *a3, X509_CRL *a4, int a5) { ((__typeof__(&X509V3_set_ctx))iapctl_crypto(85))(a0, a1, a2, a3, a4, a5); }
IAPCTL_HIDDEN int X509_ALGOR_cmp(const X509_ALGOR *a0, const X509_ALGOR *a1) { return ((__typeof__(&X509_ALGOR_cmp))iapctl_crypto(86))(a0, a1); }
IAPCTL_HIDDEN void X509_ALGOR_get0(const ASN1_OBJECT **a0, int *a1, const void **a2, const X509_ALGOR *a3) { ((__typeof__(&X509_ALGOR_get0))iapctl_crypto(87))(a0, a1, a2, a3); }
IAPCTL_HIDDEN X509_EXTENSION *X509_EXTENSION_create_by_OBJ(X509_EXTENSION **a0, const ASN1_OBJECT *a1, int a2, ASN1_OCTET_STRING *a3) { return ((__typeof__(&X509_EXTENSION_create_by_OBJ))iapctl_crypto(88))(a0, a1, a2, a3); }
IAPCTL_HIDDEN void X509_EXTENSION_free(X509_EXTENSION *a0) { ((__typeof__(&X509_EXTENSION_free))iapctl_crypto(89))(a0); }
IAPCTL_HIDDEN int X509_EXTENSION_get_critical(const X509_EXTENSION *a0) { return ((__typeof__(&X509_EXTENSION_get_critical))iapctl_crypto(90))(a0); }
IAPCTL_HIDDEN ASN1_OCTET_STRING *X509_EXTENSION_get_data(X509_EXTENSION *a0) { return ((__typeof__(&X509_EXTENSION_get_data))iapctl_crypto(91))(a0); }
IAPCTL_HIDDEN ASN1_OBJECT *X509_EXTENSION_get_object(X509_EXTENSION *a0) { return ((__typeof__(&X509_EXTENSION_get_object))iapctl_crypto(92))(a0); }
IAPCTL_HIDDEN ASN1_STRING *X509_NAME_ENTRY_get_data(const X509_NAME_ENTRY *a0) { return ((__typeof__(&X509_NAME_ENTRY_get_data))iapctl_crypto(93))(a0); }
IAPCTL_HIDDEN int X509_NAME_add_entry_by_txt(X509_NAME *a0, const char *a1, int a2, const unsigned char *a3, int a4, int a5, int a6) { return ((__typeof__(&X509_NAME_add_entry_by_txt))iapctl_crypto(94))(a0, a1, a2, a3, a4, a5, a6); }
IAPCTL_HIDDEN void X509_NAME_free(X509_NAME *a0) { ((__typeof__(&X509_NAME_free))iapctl_crypto(95))(a0); }
IAPCTL_HIDDEN X509_NAME_ENTRY *X509_NAME_get_entry(const X509_NAME *a0, int a1) { return ((__typeof__(&X509_NAME_get_entry))iapctl_crypto(96))(a0, a1); }
IAPCTL_HIDDEN int X509_NAME_get_index_by_NID(const X509_NAME *a0, int a1, int a2) { return ((__typeof__(&X509_NAME_get_index_by_NID))iapctl_crypto(97))(a0, a1, a2); }
IAPCTL_HIDDEN X509_NAME *X509_NAME_new(void) { return ((__typeof__(&X509_NAME_new))iapctl_crypto(98))(); }
IAPCTL_HIDDEN char *X509_NAME_oneline(const X509_NAME *a0, char *a1, int a2) { return ((__typeof__(&X509_NAME_oneline))iapctl_crypto(99))(a0, a1, a2); }
IAPCTL_HIDDEN void X509_STORE_CTX_free(X509_STORE_CTX *a0) { ((__typeof__(&X509_STORE_CTX_free))iapctl_crypto(100))(a0); }
IAPCTL_HIDDEN struct stack_st_X509 *X509_STORE_CTX_get0_chain(const X509_STORE_CTX *a0) { return ((__typeof__(&X509_STORE_CTX_get0_chain))iapctl_crypto(101))(a0); }
IAPCTL_HIDDEN X509_VERIFY_PARAM *X509_STORE_CTX_get0_param(const X509_STORE_CTX *a0) { return ((__typeof__(&X509_STORE_CTX_get0_param))iapctl_crypto(102))(a0); }
IAPCTL_HIDDEN X509 *X509_STORE_CTX_get_current_cert(const X509_STORE_CTX *a0) { return ((__typeof__(&X509_STORE_CTX_get_current_cert))iapctl_crypto(103))(a0); }
IAPCTL_HIDDEN int X509_STORE_CTX_get_error(const X509_STORE_CTX *a0) { return ((__typeof__(&X509_STORE_CTX_get_error))iapctl_crypto(104))(a0); }
IAPCTL_HIDDEN int X509_STORE_CTX_get_error_depth(const X509_STORE_CTX *a0) { return ((__typeof__(&X509_STORE_CTX_get_error_depth))iapctl_crypto(105))(a0); }
IAPCTL_HIDDEN int X509_STORE_CTX_init(X509_STORE_CTX *a0, X509_STORE *a1, X509 *a2, struct stack_st_X509 *a3) { return ((__typeof__(&X509_STORE_CTX_init))iapctl_crypto(106))(a0, a1, a2, a3); }
IAPCTL_HIDDEN X509_STORE_CTX *X509_STORE_CTX_new(void) { return ((__typeof__(&X509_STORE_CTX_new))iapctl_crypto(107))(); }
IAPCTL_HIDDEN void X509_STORE_CTX_set_error(X509_STORE_CTX *a0, int a1) { ((__typeof__(&X509_STORE_CTX_set_error))iapctl_crypto(108))(a0, a1); }
IAPCTL_HIDDEN void X509_STORE_CTX_set_flags(X509_STORE_CTX *a0, long unsigned int a1) { ((__typeof__(&X509_STORE_CTX_set_flags))iapctl_crypto(109))(a0, a1); }
IAPCTL_HIDDEN void X509_STORE_CTX_set_time(X509_STORE_CTX *a0, long unsigned int a1, time_t a2) { ((__typeof__(&X509_STORE_CTX_set_time))iapctl_crypto(110))(a0, a1, a2); }
IAPCTL_HIDDEN void X509_STORE_CTX_set_verify_cb(X509_STORE_CTX *a0, X509_STORE_CTX_verify_cb a1) { ((__typeof__(&X509_STORE_CTX_set_verify_cb))iapctl_crypto(111))(a0, a1); }
IAPCTL_HIDDEN int X509_STORE_add_cert(X509_STORE *a0, X509 *a1) { return ((__typeof__(&X509_STORE_add_cert))iapctl_crypto(112))(a0, a1); }
IAPCTL_HIDDEN void X509_STORE_free(X509_STORE *a0) { ((__typeof__(&X509_STORE_free))iapctl_crypto(113))(a0); }
IAPCTL_HIDDEN X509_STORE *X509_STORE_new(void) { return ((__typeof__(&X509_STORE_new))iapctl_crypto(114))(); }
IAPCTL_HIDDEN int X509_VERIFY_PARAM_clear_flags(X509_VERIFY_PARAM *a0, long unsigned int a1) { return ((__typeof__(&X509_VERIFY_PARAM_clear_flags))iapctl_crypto(115))(a0, a1); }
IAPCTL_HIDDEN int X509_VERIFY_PARAM_set_flags(X509_VERIFY_PARAM *a0, long unsigned int a1) { return ((__typeof__(&X509_VERIFY_PARAM_set_flags))iapctl_crypto(116))(a0, a1); }
IAPCTL_HIDDEN void X509_VERIFY_PARAM_set_time(X509_VERIFY_PARAM *a0, time_t a1) { ((__typeof__(&X509_VERIFY_PARAM_set_time))iapctl_crypto(117))(a0, a1); }
IAPCTL_HIDDEN int X509_add_ext(X509 *a0, X509_EXTENSION *a1, int a2) { return ((__typeof__(&X509_add_ext))iapctl_crypto(118))(a0, a1, a2); }
IAPCTL_HIDDEN int X509_check_private_key(const X509 *a0, const EVP_PKEY *a1) { return ((__typeof__(&X509_check_private_key))iapctl_crypto(119))(a0, a1); }
IAPCTL_HIDDEN int X509_cmp(const X509 *a0, const X509 *a1) { return ((__typeof__(&X509_cmp))iapctl_crypto(120))(a0, a1); }
IAPCTL_HIDDEN int X509_digest(const X509 *a0, const EVP_MD *a1, unsigned char *a2, unsigned int *a3) { return ((__typeof__(&X509_digest))iapctl_crypto(121))(a0, a1, a2, a3); }
IAPCTL_HIDDEN void X509_free(X509 *a0) { ((__typeof__(&X509_free))iapctl_crypto(122))(a0); }
IAPCTL_HIDDEN const ASN1_TIME *X509_get0_notAfter(const X509 *a0) { return ((__typeof__(&X509_get0_notAfter))iapctl_crypto(123))(a0); }
IAPCTL_HIDDEN const ASN1_TIME *X509_get0_notBefore(const X509 *a0) { return ((__typeof__(&X509_get0_notBefore))iapctl_crypto(124))(a0); }
IAPCTL_HIDDEN EVP_PKEY *X509_get0_pubkey(const X509 *a0) { return ((__typeof__(&X509_get0_pubkey))iapctl_crypto(125))(a0); }
IAPCTL_HIDDEN X509_EXTENSION *X509_get_ext(const X509 *a0, int a1) { return ((__typeof__(&X509_get_ext))iapctl_crypto(126))(a0, a1); }
IAPCTL_HIDDEN int X509_get_ext_by_OBJ(const X509 *a0, const ASN1_OBJECT *a1, int a2) { return ((__typeof__(&X509_get_ext_by_OBJ))iapctl_crypto(127))(a0, a1, a2); }
IAPCTL_HIDDEN int X509_get_ext_count(const X509 *a0) { return ((__typeof__(&X509_get_ext_count))iapctl_crypto(128))(a0); }
IAPCTL_HIDDEN X509_NAME *X509_get_issuer_name(const X509 *a0) { return ((__typeof__(&X509_get_issuer_name))iapctl_crypto(129))(a0); }
IAPCTL_HIDDEN X509_NAME *X509_get_subject_name(const X509 *a0) { return ((__typeof__(&X509_get_subject_name))iapctl_crypto(130))(a0); }
IAPCTL_HIDDEN ASN1_TIME *X509_getm_notAfter(const X509 *a0) { return ((__typeof__(&X509_getm_notAfter))iapctl_crypto(131))(a0); }
IAPCTL_HIDDEN ASN1_TIME *X509_getm_notBefore(const X509 *a0) { return ((__typeof__(&X509_getm_notBefore))iapctl_crypto(132))(a0); }
IAPCTL_HIDDEN X509 *X509_new(void) { return ((__typeof__(&X509_new))iapctl_crypto(133))(); }
IAPCTL_HIDDEN int X509_set_issuer_name(X509 *a0, const X509_NAME *a1) { return ((__typeof__(&X509_set_issuer_name))iapctl_crypto(134))(a0, a1); }
IAPCTL_HIDDEN int X509_set_pubkey(X509 *a0, EVP_PKEY *a1) { return ((__typeof__(&X509_set_pubkey))iapctl_crypto(135))(a0, a1); }
IAPCTL_HIDDEN int X509_set_serialNumber(X509 *a0, ASN1_INTEGER *a1) { return ((__typeof__(&X509_set_serialNumber))iapctl_crypto(136))(a0, a1); }
IAPCTL_HIDDEN int X509_set_subject_name(X509 *a0, const X509_NAME *a1) { return ((__typeof__(&X509_set_subject_name))iapctl_crypto(137))(a0, a1); }
IAPCTL_HIDDEN int X509_set_version(X509 *a0, long int a1) { return ((__typeof__(&X509_set_version))iapctl_crypto(138))(a0, a1); }
IAPCTL_HIDDEN int X509_sign(X509 *a0, EVP_PKEY *a1, const EVP_MD *a2) { return ((__typeof__(&X509_sign))iapctl_crypto(139))(a0, a1, a2); }
IAPCTL_HIDDEN int X509_supported_extension(X509_EXTENSION *a0) { return ((__typeof__(&X509_supported_extension))iapctl_crypto(140))(a0); }
IAPCTL_HIDDEN int X509_verify_cert(X509_STORE_CTX *a0) { return ((__typeof__(&X509_verify_cert))iapctl_crypto(141))(a0); }
IAPCTL_HIDDEN const char *X509_verify_cert_error_string(long int a0) { return ((__typeof__(&X509_verify_cert_error_string))iapctl_crypto(142))(a0); }
IAPCTL_HIDDEN CMS_ContentInfo *d2i_CMS_ContentInfo(CMS_ContentInfo **a0, const unsigned char **a1, long int a2) { return ((__typeof__(&d2i_CMS_ContentInfo))iapctl_crypto(143))(a0, a1, a2); }
IAPCTL_HIDDEN ECDSA_SIG *d2i_ECDSA_SIG(ECDSA_SIG **a0, const unsigned char **a1, long int a2) { return ((__typeof__(&d2i_ECDSA_SIG))iapctl_crypto(144))(a0, a1, a2); }
IAPCTL_HIDDEN PKCS7 *d2i_PKCS7(PKCS7 **a0, const unsigned char **a1, long int a2) { return ((__typeof__(&d2i_PKCS7))iapctl_crypto(145))(a0, a1, a2); }
IAPCTL_HIDDEN X509 *d2i_X509(X509 **a0, const unsigned char **a1, long int a2) { return ((__typeof__(&d2i_X509))iapctl_crypto(146))(a0, a1, a2); }
IAPCTL_HIDDEN int i2d_ECDSA_SIG(const ECDSA_SIG *a0, unsigned char **a1) { return ((__typeof__(&i2d_ECDSA_SIG))iapctl_crypto(147))(a0, a1); }
IAPCTL_HIDDEN int i2d_X509(const X509 *a0, unsigned char **a1) { return ((__typeof__(&i2d_X509))iapctl_crypto(148))(a0, a1); }
