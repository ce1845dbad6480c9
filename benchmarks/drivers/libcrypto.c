/* Drives OpenSSL 1.1.1's bn_exp.c, err.c and pem_lib.c through libcrypto's public API, with
   inputs from a fixed linear congruential generator, and prints what each call returns, so
   that two builds (one with the annotated files in place of the originals) can be compared by
   output:
   - bn_exp.c: BN_mod_exp on odd moduli (Montgomery, one-word bases), on even moduli
     (reciprocal), with constant-time exponents, BN_mod_exp_simple, BN_mod_exp_mont_word,
     BN_exp, zero and one exponents and moduli, and the even-modulus errors;
   - err.c: errors pushed past the queue's size, marks, data, every string lookup, a library
     with no strings, printing through a callback, clearing;
   - pem_lib.c: PEM_write_bio and PEM_read_bio of fixed blocks, with and without headers,
     PEM_ASN1_write_bio/PEM_ASN1_read_bio of an octet string, in clear and encrypted with a
     passphrase given directly or to the default callback, a wrong passphrase, PEM_proc_type,
     PEM_dek_info and PEM_get_EVP_CIPHER_INFO on good and bad headers. Random bytes (IVs) come
   from the same generator.
   Error entries are printed without their file and line (the annotated files are others). */
#include <stdio.h>
#include <string.h>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

static unsigned long seed = 12345;

static unsigned char next_byte(void)
{
    seed = seed * 1103515245UL + 12345UL;
    return (unsigned char)(seed >> 16);
}

/* Random bytes (the IVs of encrypted PEM blocks) from the same generator: every run is the
   same run. */
static int generator_bytes(unsigned char *buf, int num)
{
    for (int i = 0; i < num; i++)
        buf[i] = next_byte();
    return 1;
}

static int generator_status(void)
{
    return 1;
}

static RAND_METHOD generator = {NULL, generator_bytes, NULL, NULL, generator_bytes,
                                generator_status};

static BIGNUM *random_bn(int bytes, int odd)
{
    unsigned char buf[128];
    for (int i = 0; i < bytes; i++)
        buf[i] = next_byte();
    if (odd)
        buf[bytes - 1] |= 1;
    else
        buf[bytes - 1] &= 0xfe;
    buf[0] |= 0x80;
    return BN_bin2bn(buf, bytes, NULL);
}

static void print_bn(const char *what, int ok, const BIGNUM *r)
{
    char *h = ok ? BN_bn2hex(r) : NULL;
    printf("%s %d %s\n", what, ok, h ? h : "-");
    OPENSSL_free(h);
}

/* Prints and empties the error queue, without files and lines. */
static void drain_errors(const char *what)
{
    unsigned long e;
    const char *data;
    int flags;
    char buf[256];
    while ((e = ERR_get_error_line_data(NULL, NULL, &data, &flags)) != 0) {
        ERR_error_string_n(e, buf, sizeof buf);
        printf("%s error %lx %s [%s|%s|%s] data=%s\n", what, e, buf,
               ERR_lib_error_string(e) ? ERR_lib_error_string(e) : "-",
               ERR_func_error_string(e) ? ERR_func_error_string(e) : "-",
               ERR_reason_error_string(e) ? ERR_reason_error_string(e) : "-",
               (flags & ERR_TXT_STRING) ? data : "-");
    }
}

static void exponentiation(void)
{
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *r = BN_new();
    for (int round = 0; round < 40; round++) {
        int bytes = 1 + round % 48;
        BIGNUM *a = random_bn(bytes, round % 3 == 0);
        BIGNUM *p = random_bn(1 + round % 24, round % 2);
        BIGNUM *m = random_bn(bytes + 1, round % 4 != 3);
        char what[32];
        snprintf(what, sizeof what, "mod_exp %d", round);
        print_bn(what, BN_mod_exp(r, a, p, m, ctx), r);
        snprintf(what, sizeof what, "simple %d", round);
        print_bn(what, BN_mod_exp_simple(r, a, p, m, ctx), r);
        if (BN_is_odd(m)) {
            BIGNUM *pc = BN_dup(p);
            BN_set_flags(pc, BN_FLG_CONSTTIME);
            snprintf(what, sizeof what, "consttime %d", round);
            print_bn(what, BN_mod_exp(r, a, pc, m, ctx), r);
            snprintf(what, sizeof what, "mont_word %d", round);
            print_bn(what, BN_mod_exp_mont_word(r, 3 + round, p, m, ctx, NULL), r);
            BN_free(pc);
        } else {
            snprintf(what, sizeof what, "mont even %d", round);
            print_bn(what, BN_mod_exp_mont(r, a, p, m, ctx, NULL), r);
            drain_errors(what);
        }
        BN_free(a);
        BN_free(p);
        BN_free(m);
    }
    BIGNUM *a = BN_new(), *p = BN_new(), *m = BN_new();
    BN_set_word(a, 7);
    BN_set_word(p, 0);
    BN_set_word(m, 1);
    print_bn("zero exponent, modulus 1", BN_mod_exp(r, a, p, m, ctx), r);
    BN_set_word(m, 13);
    print_bn("zero exponent", BN_mod_exp(r, a, p, m, ctx), r);
    print_bn("zero exponent word", BN_mod_exp_mont_word(r, 7, p, m, ctx, NULL), r);
    BN_set_word(p, 1);
    print_bn("one exponent", BN_mod_exp(r, a, p, m, ctx), r);
    BN_zero(a);
    print_bn("zero base", BN_mod_exp(r, a, p, m, ctx), r);
    print_bn("zero base word", BN_mod_exp_mont_word(r, 0, p, m, ctx, NULL), r);
    BN_set_word(a, 3);
    BN_set_word(p, 100);
    print_bn("exp 3^100", BN_exp(r, a, p, ctx), r);
    BN_set_word(m, 0);
    print_bn("modulus 0", BN_mod_exp(r, a, p, m, ctx), r);
    drain_errors("modulus 0");
    BN_free(a);
    BN_free(p);
    BN_free(m);
    BN_free(r);
    BN_CTX_free(ctx);
}

static int print_line(const char *str, size_t len, void *u)
{
    (void)u;
    /* "thread:error:CODE:lib:func:reason:file:line:data": the code only. */
    const char *code = strstr(str, ":error:");
    if (code && (size_t)(code - str) + 15 <= len)
        printf("callback %.8s\n", code + 7);
    return 1;
}

static void errors(void)
{
    ERR_load_crypto_strings();
    for (int i = 0; i < 20; i++)
        ERR_put_error(ERR_LIB_BN, BN_F_BN_MOD_EXP_MONT, BN_R_CALLED_WITH_EVEN_MODULUS, "d.c", i);
    printf("peek %lx last %lx\n", ERR_peek_error(), ERR_peek_last_error());
    drain_errors("wrapped");
    ERR_put_error(ERR_LIB_PEM, PEM_F_PEM_READ_BIO, PEM_R_NO_START_LINE, "d.c", 1);
    ERR_add_error_data(3, "one", "two", "three");
    ERR_set_mark();
    ERR_put_error(ERR_LIB_EVP, 0, EVP_R_BAD_DECRYPT, "d.c", 2);
    ERR_put_error(100, 1, 7, "d.c", 3);
    printf("pop %d\n", ERR_pop_to_mark());
    printf("pop again %d\n", ERR_pop_to_mark());
    ERR_put_error(100, 1, 7, "d.c", 3);
    ERR_put_error(ERR_LIB_SYS, 0, 2, "d.c", 4);
    drain_errors("marked");
    ERR_put_error(ERR_LIB_ASN1, ASN1_F_ASN1_GET_OBJECT, ASN1_R_HEADER_TOO_LONG, "d.c", 5);
    ERR_print_errors_cb(print_line, NULL);
    ERR_put_error(ERR_LIB_RSA, 0, 0, "d.c", 6);
    char *s = ERR_error_string(ERR_peek_error(), NULL);
    printf("static string %s\n", s);
    ERR_clear_error();
    printf("after clear %lx\n", ERR_get_error());
}

static void pem_block(const char *name, const char *header, int len)
{
    unsigned char data[300];
    for (int i = 0; i < len; i++)
        data[i] = next_byte();
    BIO *b = BIO_new(BIO_s_mem());
    int w = PEM_write_bio(b, name, header, data, len);
    char *text;
    long n = BIO_get_mem_data(b, &text);
    printf("write %s %d %ld\n%.*s", name, w, n, (int)n, text);
    char *rname = NULL, *rheader = NULL;
    unsigned char *rdata = NULL;
    long rlen = 0;
    int r = PEM_read_bio(b, &rname, &rheader, &rdata, &rlen);
    printf("read %d %s [%s] %ld same=%d\n", r, rname ? rname : "-", rheader ? rheader : "-",
           rlen, r && rlen == len && memcmp(rdata, data, (size_t)len) == 0);
    OPENSSL_free(rname);
    OPENSSL_free(rheader);
    OPENSSL_free(rdata);
    BIO_free(b);
    drain_errors(name);
}

static void pem_asn1(const EVP_CIPHER *enc, const char *pass, int by_callback,
                     const char *read_pass)
{
    ASN1_OCTET_STRING *o = ASN1_OCTET_STRING_new();
    unsigned char bytes[64];
    for (int i = 0; i < 64; i++)
        bytes[i] = next_byte();
    ASN1_OCTET_STRING_set(o, bytes, 64);
    BIO *b = BIO_new(BIO_s_mem());
    int w = PEM_ASN1_write_bio((i2d_of_void *)i2d_ASN1_OCTET_STRING, "OCTETS", b, o, enc,
                               by_callback ? NULL : (unsigned char *)pass,
                               by_callback ? 0 : (int)strlen(pass), NULL,
                               by_callback ? (void *)pass : NULL);
    char *text;
    long n = BIO_get_mem_data(b, &text);
    printf("%.*s", (int)n, text);
    ASN1_OCTET_STRING *back = PEM_ASN1_read_bio((d2i_of_void *)d2i_ASN1_OCTET_STRING, "OCTETS",
                                                b, NULL, NULL, (void *)read_pass);
    printf("asn1 %s %d read=%d same=%d\n", enc ? EVP_CIPHER_name(enc) : "clear", w,
           back != NULL, back != NULL && ASN1_OCTET_STRING_cmp(o, back) == 0);
    ASN1_OCTET_STRING_free(back);
    ASN1_OCTET_STRING_free(o);
    BIO_free(b);
    drain_errors("asn1");
}

static void headers(void)
{
    char buf[PEM_BUFSIZE * 2];
    buf[0] = '\0';
    PEM_proc_type(buf, PEM_TYPE_ENCRYPTED);
    PEM_dek_info(buf, "AES-128-CBC", 16, "0123456789abcdef");
    printf("header [%s]\n", buf);
    const char *tests[] = {
        "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n",
        "Proc-Type: 4,ENCRYPTED\nDEK-Info: DES-EDE3-CBC,0011223344556677\n",
        "Proc-Type: 4,ENCRYPTED\nDEK-Info: NO-SUCH-CIPHER,00\n",
        "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0011\n",
        "Proc-Type: 4,MIC-ONLY\n",
        "Proc-Type: 3,ENCRYPTED\n",
        "",
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        EVP_CIPHER_INFO info;
        char copy[256];
        strcpy(copy, tests[i]);
        int ok = PEM_get_EVP_CIPHER_INFO(copy, &info);
        printf("cipher info %zu: %d %s\n", i, ok,
               ok && info.cipher ? EVP_CIPHER_name(info.cipher) : "-");
        drain_errors("cipher info");
    }
    char pw[PEM_BUFSIZE];
    printf("default callback %d\n", PEM_def_callback(pw, sizeof pw, 0, "secret"));
    printf("default callback short %d\n", PEM_def_callback(pw, 3, 0, "secret"));
    drain_errors("callback");
}

int main(void)
{
    RAND_set_rand_method(&generator);
    exponentiation();
    errors();
    pem_block("TEST BLOCK", "", 0);
    pem_block("TEST BLOCK", "", 1);
    pem_block("CERTIFICATE", "", 48);
    pem_block("CERTIFICATE", "", 257);
    pem_block("WITH HEADER", "Proc-Type: 4,MIC-ONLY\n", 40);
    pem_asn1(NULL, "", 0, NULL);
    pem_asn1(EVP_aes_128_cbc(), "secret passphrase", 0, "secret passphrase");
    pem_asn1(EVP_des_ede3_cbc(), "another one", 1, "another one");
    pem_asn1(EVP_aes_256_cbc(), "right", 0, "wrong");
    headers();
    return 0;
}
