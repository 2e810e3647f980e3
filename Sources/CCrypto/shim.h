#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
