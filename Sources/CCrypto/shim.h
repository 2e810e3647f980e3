// libcrypto, opened with dlopen the first time a command needs it (not linked: OpenSSL 3's 4.7 MB,
// its relocations and initialisers cost every start, --version included, about 1.5 ms). Swift
// calls only the ccrypto_* functions below, never EVP_*/HMAC/ERR_*/…: the binary then has no
// reference to libcrypto, which the link would refuse (no -lcrypto). Constants and macros
// (EVP_MAX_MD_SIZE, EVP_PKEY_ED25519, OSSL_DIGEST_PARAM_SIZE) still come from the headers.
// docs/decisions/dlopen-libraries.md.
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include <openssl/core_names.h>
#include <dlfcn.h>
#include "../CLinux/system_libraries.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct ccrypto_functions {
    // NULL once every function is resolved; else what failed (dlerror's text).
    const char *error;
    // Typed from the headers' own declarations, so a pointer cannot disagree with its function.
    __typeof__(EVP_MD_CTX_new) *EVP_MD_CTX_new;
    __typeof__(EVP_MD_CTX_free) *EVP_MD_CTX_free;
    __typeof__(EVP_Digest) *EVP_Digest;
    __typeof__(EVP_DigestInit_ex) *EVP_DigestInit_ex;
    __typeof__(EVP_DigestInit_ex2) *EVP_DigestInit_ex2;
    __typeof__(EVP_DigestUpdate) *EVP_DigestUpdate;
    __typeof__(EVP_DigestFinal_ex) *EVP_DigestFinal_ex;
    __typeof__(EVP_DigestFinalXOF) *EVP_DigestFinalXOF;
    __typeof__(EVP_DigestSignInit) *EVP_DigestSignInit;
    __typeof__(EVP_DigestSign) *EVP_DigestSign;
    __typeof__(EVP_DigestVerifyInit) *EVP_DigestVerifyInit;
    __typeof__(EVP_DigestVerify) *EVP_DigestVerify;
    __typeof__(EVP_PKEY_new_raw_public_key) *EVP_PKEY_new_raw_public_key;
    __typeof__(EVP_PKEY_new_raw_private_key) *EVP_PKEY_new_raw_private_key;
    __typeof__(EVP_PKEY_get_raw_public_key) *EVP_PKEY_get_raw_public_key;
    __typeof__(EVP_PKEY_free) *EVP_PKEY_free;
    __typeof__(EVP_PBE_scrypt) *EVP_PBE_scrypt;
    __typeof__(EVP_sha256) *EVP_sha256;
    __typeof__(EVP_md5) *EVP_md5;
    __typeof__(EVP_blake2b512) *EVP_blake2b512;
    __typeof__(EVP_shake256) *EVP_shake256;
    __typeof__(HMAC) *HMAC;
    __typeof__(ERR_get_error) *ERR_get_error;
    __typeof__(ERR_error_string_n) *ERR_error_string_n;
    __typeof__(ERR_clear_error) *ERR_clear_error;
    __typeof__(CRYPTO_memcmp) *CRYPTO_memcmp;
    __typeof__(OPENSSL_cleanse) *OPENSSL_cleanse;
    __typeof__(OSSL_PARAM_construct_size_t) *OSSL_PARAM_construct_size_t;
    __typeof__(OSSL_PARAM_construct_end) *OSSL_PARAM_construct_end;
};

// Opens the library and resolves every function once (the first caller does, the others wait).
// Function-local state: each object file that inlines this has its own copy, and each copy
// resolves the same addresses (dlopen counts references).
static inline const struct ccrypto_functions *ccrypto_functions(void) {
    static struct ccrypto_functions f;
    static int done;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char error[512];
    if (__atomic_load_n(&done, __ATOMIC_ACQUIRE)) return &f;
    pthread_mutex_lock(&lock);
    if (!done) {
        void *library = dlopen(MAPGATE_SYSTEM_LIBRARY_FOLDER "libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
        const char *missing = library ? NULL : dlerror();
#define CCRYPTO_RESOLVE(name) \
        if (!missing && !(*(void **)&f.name = dlsym(library, #name))) missing = dlerror();
        CCRYPTO_RESOLVE(EVP_MD_CTX_new)
        CCRYPTO_RESOLVE(EVP_MD_CTX_free)
        CCRYPTO_RESOLVE(EVP_Digest)
        CCRYPTO_RESOLVE(EVP_DigestInit_ex)
        CCRYPTO_RESOLVE(EVP_DigestInit_ex2)
        CCRYPTO_RESOLVE(EVP_DigestUpdate)
        CCRYPTO_RESOLVE(EVP_DigestFinal_ex)
        CCRYPTO_RESOLVE(EVP_DigestFinalXOF)
        CCRYPTO_RESOLVE(EVP_DigestSignInit)
        CCRYPTO_RESOLVE(EVP_DigestSign)
        CCRYPTO_RESOLVE(EVP_DigestVerifyInit)
        CCRYPTO_RESOLVE(EVP_DigestVerify)
        CCRYPTO_RESOLVE(EVP_PKEY_new_raw_public_key)
        CCRYPTO_RESOLVE(EVP_PKEY_new_raw_private_key)
        CCRYPTO_RESOLVE(EVP_PKEY_get_raw_public_key)
        CCRYPTO_RESOLVE(EVP_PKEY_free)
        CCRYPTO_RESOLVE(EVP_PBE_scrypt)
        CCRYPTO_RESOLVE(EVP_sha256)
        CCRYPTO_RESOLVE(EVP_md5)
        CCRYPTO_RESOLVE(EVP_blake2b512)
        CCRYPTO_RESOLVE(EVP_shake256)
        CCRYPTO_RESOLVE(HMAC)
        CCRYPTO_RESOLVE(ERR_get_error)
        CCRYPTO_RESOLVE(ERR_error_string_n)
        CCRYPTO_RESOLVE(ERR_clear_error)
        CCRYPTO_RESOLVE(CRYPTO_memcmp)
        CCRYPTO_RESOLVE(OPENSSL_cleanse)
        CCRYPTO_RESOLVE(OSSL_PARAM_construct_size_t)
        CCRYPTO_RESOLVE(OSSL_PARAM_construct_end)
#undef CCRYPTO_RESOLVE
        if (missing) {
            snprintf(error, sizeof error, "%s", missing);
            f.error = error;
        }
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return &f;
}

// NULL when libcrypto is loaded; else why it is not. Call (and check) before the other ccrypto_*
// functions: they call through the resolved pointers without checking them, except the error
// queue's and ccrypto_OPENSSL_cleanse, which are safe without the library (an error path or a
// `defer` may reach them after the check failed).
static inline const char *ccrypto_load_error(void) { return ccrypto_functions()->error; }

static inline EVP_MD_CTX *ccrypto_EVP_MD_CTX_new(void) { return ccrypto_functions()->EVP_MD_CTX_new(); }
static inline void ccrypto_EVP_MD_CTX_free(EVP_MD_CTX *ctx) { ccrypto_functions()->EVP_MD_CTX_free(ctx); }
static inline int ccrypto_EVP_Digest(const void *data, size_t count, unsigned char *md, unsigned int *size, const EVP_MD *type, ENGINE *impl) {
    return ccrypto_functions()->EVP_Digest(data, count, md, size, type, impl);
}
static inline int ccrypto_EVP_DigestInit_ex(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl) {
    return ccrypto_functions()->EVP_DigestInit_ex(ctx, type, impl);
}
static inline int ccrypto_EVP_DigestInit_ex2(EVP_MD_CTX *ctx, const EVP_MD *type, const OSSL_PARAM params[]) {
    return ccrypto_functions()->EVP_DigestInit_ex2(ctx, type, params);
}
static inline int ccrypto_EVP_DigestUpdate(EVP_MD_CTX *ctx, const void *d, size_t cnt) {
    return ccrypto_functions()->EVP_DigestUpdate(ctx, d, cnt);
}
static inline int ccrypto_EVP_DigestFinal_ex(EVP_MD_CTX *ctx, unsigned char *md, unsigned int *s) {
    return ccrypto_functions()->EVP_DigestFinal_ex(ctx, md, s);
}
static inline int ccrypto_EVP_DigestFinalXOF(EVP_MD_CTX *ctx, unsigned char *md, size_t length) {
    return ccrypto_functions()->EVP_DigestFinalXOF(ctx, md, length);
}
static inline int ccrypto_EVP_DigestSignInit(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const EVP_MD *type, ENGINE *e, EVP_PKEY *pkey) {
    return ccrypto_functions()->EVP_DigestSignInit(ctx, pctx, type, e, pkey);
}
static inline int ccrypto_EVP_DigestSign(EVP_MD_CTX *ctx, unsigned char *sigret, size_t *siglen, const unsigned char *tbs, size_t tbslen) {
    return ccrypto_functions()->EVP_DigestSign(ctx, sigret, siglen, tbs, tbslen);
}
static inline int ccrypto_EVP_DigestVerifyInit(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const EVP_MD *type, ENGINE *e, EVP_PKEY *pkey) {
    return ccrypto_functions()->EVP_DigestVerifyInit(ctx, pctx, type, e, pkey);
}
static inline int ccrypto_EVP_DigestVerify(EVP_MD_CTX *ctx, const unsigned char *sigret, size_t siglen, const unsigned char *tbs, size_t tbslen) {
    return ccrypto_functions()->EVP_DigestVerify(ctx, sigret, siglen, tbs, tbslen);
}
static inline EVP_PKEY *ccrypto_EVP_PKEY_new_raw_public_key(int type, ENGINE *e, const unsigned char *pub, size_t len) {
    return ccrypto_functions()->EVP_PKEY_new_raw_public_key(type, e, pub, len);
}
static inline EVP_PKEY *ccrypto_EVP_PKEY_new_raw_private_key(int type, ENGINE *e, const unsigned char *priv, size_t len) {
    return ccrypto_functions()->EVP_PKEY_new_raw_private_key(type, e, priv, len);
}
static inline int ccrypto_EVP_PKEY_get_raw_public_key(const EVP_PKEY *pkey, unsigned char *pub, size_t *len) {
    return ccrypto_functions()->EVP_PKEY_get_raw_public_key(pkey, pub, len);
}
static inline void ccrypto_EVP_PKEY_free(EVP_PKEY *pkey) { ccrypto_functions()->EVP_PKEY_free(pkey); }
static inline int ccrypto_EVP_PBE_scrypt(const char *pass, size_t passlen, const unsigned char *salt, size_t saltlen,
                                         uint64_t N, uint64_t r, uint64_t p, uint64_t maxmem, unsigned char *key, size_t keylen) {
    return ccrypto_functions()->EVP_PBE_scrypt(pass, passlen, salt, saltlen, N, r, p, maxmem, key, keylen);
}
static inline const EVP_MD *ccrypto_EVP_sha256(void) { return ccrypto_functions()->EVP_sha256(); }
static inline const EVP_MD *ccrypto_EVP_md5(void) { return ccrypto_functions()->EVP_md5(); }
static inline const EVP_MD *ccrypto_EVP_blake2b512(void) { return ccrypto_functions()->EVP_blake2b512(); }
static inline const EVP_MD *ccrypto_EVP_shake256(void) { return ccrypto_functions()->EVP_shake256(); }
static inline unsigned char *ccrypto_HMAC(const EVP_MD *evp_md, const void *key, int key_len, const unsigned char *data,
                                          size_t data_len, unsigned char *md, unsigned int *md_len) {
    return ccrypto_functions()->HMAC(evp_md, key, key_len, data, data_len, md, md_len);
}
static inline int ccrypto_CRYPTO_memcmp(const void *a, const void *b, size_t len) {
    return ccrypto_functions()->CRYPTO_memcmp(a, b, len);
}
static inline OSSL_PARAM ccrypto_OSSL_PARAM_construct_size_t(const char *key, size_t *buf) {
    return ccrypto_functions()->OSSL_PARAM_construct_size_t(key, buf);
}
static inline OSSL_PARAM ccrypto_OSSL_PARAM_construct_end(void) { return ccrypto_functions()->OSSL_PARAM_construct_end(); }

// Safe without the library: an empty queue, nothing to clear.
static inline unsigned long ccrypto_ERR_get_error(void) {
    const struct ccrypto_functions *f = ccrypto_functions();
    return f->error ? 0 : f->ERR_get_error();
}
static inline void ccrypto_ERR_error_string_n(unsigned long e, char *buf, size_t len) {
    const struct ccrypto_functions *f = ccrypto_functions();
    if (!f->error) f->ERR_error_string_n(e, buf, len);
    else if (len > 0) buf[0] = 0;
}
static inline void ccrypto_ERR_clear_error(void) {
    const struct ccrypto_functions *f = ccrypto_functions();
    if (!f->error) f->ERR_clear_error();
}
// Safe without the library: glibc's explicit_bzero, which the compiler does not remove either.
static inline void ccrypto_OPENSSL_cleanse(void *ptr, size_t len) {
    const struct ccrypto_functions *f = ccrypto_functions();
    if (!f->error) f->OPENSSL_cleanse(ptr, len);
    else explicit_bzero(ptr, len);
}
