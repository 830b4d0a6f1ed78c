/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the reduction engine: for every predefined operation and every predefined
 * datatype, mf_op_check must accept exactly the pairs MPI-4.1 section 6.9.2 defines (the
 * expected groups are written out here again, independently of the library's table), and
 * mf_op_apply must give what a plain reference loop computes on the same values, including
 * wrap-around of small integer types, logical results as 0/1, complex products and the
 * MINLOC/MAXLOC tie rule. Also user-defined operations: argument passing, commutativity flag
 * and handle lifetime.
 */
#include "coll.h"
#include "unit.h"

#include <complex.h>
#include <stdbool.h>
#include <string.h>

enum { CINT = 1, FINT = 2, MULTI = 4, FLT = 8, CPX = 16, LOGI = 32, BYTE = 64, PAIR = 128 };

/* How the test reads and writes one element. */
typedef enum { V_S, V_U, V_F, V_C, V_L, V_P, V_NONE } vclass_t;
typedef enum { C_F32, C_F64, C_FLD, C_F16, C_F128, C_INT, C_SHORT, C_LONG } ctype_t;

typedef struct {
    MPI_Datatype dt;
    const char *name;
    unsigned groups;
    vclass_t vc;
    int size;        /* V_S, V_U, V_L: bytes */
    ctype_t ct, ct2; /* V_F, V_C: the real type; V_P: value and index types */
} tcase_t;

#ifdef __FLT16_MAX__
#define F16_GROUPS FLT
#define C16_GROUPS CPX
#else
#define F16_GROUPS 0
#define C16_GROUPS 0
#endif
#ifdef __FLT128_MAX__
#define F128_GROUPS FLT
#define C128_GROUPS CPX
#else
#define F128_GROUPS 0
#define C128_GROUPS 0
#endif

static const tcase_t types[] = {
    {MPI_INT, "MPI_INT", CINT, V_S, sizeof(int), 0, 0},
    {MPI_LONG, "MPI_LONG", CINT, V_S, sizeof(long), 0, 0},
    {MPI_SHORT, "MPI_SHORT", CINT, V_S, sizeof(short), 0, 0},
    {MPI_LONG_LONG, "MPI_LONG_LONG", CINT, V_S, sizeof(long long), 0, 0},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", CINT, V_S, 1, 0, 0},
    {MPI_INT8_T, "MPI_INT8_T", CINT, V_S, 1, 0, 0},
    {MPI_INT16_T, "MPI_INT16_T", CINT, V_S, 2, 0, 0},
    {MPI_INT32_T, "MPI_INT32_T", CINT, V_S, 4, 0, 0},
    {MPI_INT64_T, "MPI_INT64_T", CINT, V_S, 8, 0, 0},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", CINT, V_U, sizeof(unsigned short), 0, 0},
    {MPI_UNSIGNED, "MPI_UNSIGNED", CINT, V_U, sizeof(unsigned), 0, 0},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", CINT, V_U, sizeof(unsigned long), 0, 0},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", CINT, V_U, 8, 0, 0},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", CINT, V_U, 1, 0, 0},
    {MPI_UINT8_T, "MPI_UINT8_T", CINT, V_U, 1, 0, 0},
    {MPI_UINT16_T, "MPI_UINT16_T", CINT, V_U, 2, 0, 0},
    {MPI_UINT32_T, "MPI_UINT32_T", CINT, V_U, 4, 0, 0},
    {MPI_UINT64_T, "MPI_UINT64_T", CINT, V_U, 8, 0, 0},
    {MPI_INTEGER, "MPI_INTEGER", FINT, V_S, 4, 0, 0},
    {MPI_INTEGER1, "MPI_INTEGER1", FINT, V_S, 1, 0, 0},
    {MPI_INTEGER2, "MPI_INTEGER2", FINT, V_S, 2, 0, 0},
    {MPI_INTEGER4, "MPI_INTEGER4", FINT, V_S, 4, 0, 0},
    {MPI_INTEGER8, "MPI_INTEGER8", FINT, V_S, 8, 0, 0},
    {MPI_INTEGER16, "MPI_INTEGER16", FINT, V_S, 16, 0, 0},
    {MPI_AINT, "MPI_AINT", MULTI, V_S, sizeof(MPI_Aint), 0, 0},
    {MPI_OFFSET, "MPI_OFFSET", MULTI, V_S, sizeof(MPI_Offset), 0, 0},
    {MPI_COUNT, "MPI_COUNT", MULTI, V_S, sizeof(MPI_Count), 0, 0},
    {MPI_FLOAT, "MPI_FLOAT", FLT, V_F, 0, C_F32, 0},
    {MPI_DOUBLE, "MPI_DOUBLE", FLT, V_F, 0, C_F64, 0},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", FLT, V_F, 0, C_FLD, 0},
    {MPI_REAL, "MPI_REAL", FLT, V_F, 0, C_F32, 0},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", FLT, V_F, 0, C_F64, 0},
    {MPI_REAL2, "MPI_REAL2", F16_GROUPS, V_F, 0, C_F16, 0},
    {MPI_REAL4, "MPI_REAL4", FLT, V_F, 0, C_F32, 0},
    {MPI_REAL8, "MPI_REAL8", FLT, V_F, 0, C_F64, 0},
    {MPI_REAL16, "MPI_REAL16", F128_GROUPS, V_F, 0, C_F128, 0},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", CPX, V_C, 0, C_F32, 0},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", CPX, V_C, 0, C_F64, 0},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", CPX, V_C, 0, C_FLD, 0},
    {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", CPX, V_C, 0, C_F32, 0},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", CPX, V_C, 0, C_F64, 0},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", CPX, V_C, 0, C_FLD, 0},
    {MPI_COMPLEX, "MPI_COMPLEX", CPX, V_C, 0, C_F32, 0},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", CPX, V_C, 0, C_F64, 0},
    {MPI_COMPLEX4, "MPI_COMPLEX4", C16_GROUPS, V_C, 0, C_F16, 0},
    {MPI_COMPLEX8, "MPI_COMPLEX8", CPX, V_C, 0, C_F32, 0},
    {MPI_COMPLEX16, "MPI_COMPLEX16", CPX, V_C, 0, C_F64, 0},
    {MPI_COMPLEX32, "MPI_COMPLEX32", C128_GROUPS, V_C, 0, C_F128, 0},
    {MPI_C_BOOL, "MPI_C_BOOL", LOGI, V_L, sizeof(bool), 0, 0},
    {MPI_CXX_BOOL, "MPI_CXX_BOOL", LOGI, V_L, sizeof(bool), 0, 0},
    {MPI_LOGICAL, "MPI_LOGICAL", LOGI, V_L, 4, 0, 0},
    {MPI_LOGICAL1, "MPI_LOGICAL1", LOGI, V_L, 1, 0, 0},
    {MPI_LOGICAL2, "MPI_LOGICAL2", LOGI, V_L, 2, 0, 0},
    {MPI_LOGICAL4, "MPI_LOGICAL4", LOGI, V_L, 4, 0, 0},
    {MPI_LOGICAL8, "MPI_LOGICAL8", LOGI, V_L, 8, 0, 0},
    {MPI_LOGICAL16, "MPI_LOGICAL16", LOGI, V_L, 16, 0, 0},
    {MPI_BYTE, "MPI_BYTE", BYTE, V_U, 1, 0, 0},
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", PAIR, V_P, 0, C_F32, C_INT},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", PAIR, V_P, 0, C_F64, C_INT},
    {MPI_LONG_INT, "MPI_LONG_INT", PAIR, V_P, 0, C_LONG, C_INT},
    {MPI_2INT, "MPI_2INT", PAIR, V_P, 0, C_INT, C_INT},
    {MPI_SHORT_INT, "MPI_SHORT_INT", PAIR, V_P, 0, C_SHORT, C_INT},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", PAIR, V_P, 0, C_FLD, C_INT},
    {MPI_2REAL, "MPI_2REAL", PAIR, V_P, 0, C_F32, C_F32},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", PAIR, V_P, 0, C_F64, C_F64},
    {MPI_2INTEGER, "MPI_2INTEGER", PAIR, V_P, 0, C_INT, C_INT},
    /* No reduction but MPI_REPLACE/MPI_NO_OP applies to these. */
    {MPI_CHAR, "MPI_CHAR", 0, V_NONE, 0, 0, 0},
    {MPI_WCHAR, "MPI_WCHAR", 0, V_NONE, 0, 0, 0},
    {MPI_CHARACTER, "MPI_CHARACTER", 0, V_NONE, 0, 0, 0},
    {MPI_PACKED, "MPI_PACKED", 0, V_NONE, 0, 0, 0},
};

typedef struct {
    MPI_Op op;
    const char *name;
    unsigned groups;
} ocase_t;

static const ocase_t ops[] = {
    {MPI_SUM, "MPI_SUM", CINT | FINT | MULTI | FLT | CPX},
    {MPI_PROD, "MPI_PROD", CINT | FINT | MULTI | FLT | CPX},
    {MPI_MIN, "MPI_MIN", CINT | FINT | MULTI | FLT},
    {MPI_MAX, "MPI_MAX", CINT | FINT | MULTI | FLT},
    {MPI_LAND, "MPI_LAND", CINT | LOGI},
    {MPI_LOR, "MPI_LOR", CINT | LOGI},
    {MPI_LXOR, "MPI_LXOR", CINT | LOGI},
    {MPI_BAND, "MPI_BAND", CINT | FINT | MULTI | BYTE},
    {MPI_BOR, "MPI_BOR", CINT | FINT | MULTI | BYTE},
    {MPI_BXOR, "MPI_BXOR", CINT | FINT | MULTI | BYTE},
    {MPI_MINLOC, "MPI_MINLOC", PAIR},
    {MPI_MAXLOC, "MPI_MAXLOC", PAIR},
};

#define N 13

/* ---- element access ---------------------------------------------------------------------- */

static long long get_int(const tcase_t *t, const void *p)
{
    if (t->vc == V_S || t->vc == V_U) {
        if (t->size == 16) {
            __int128 v;
            memcpy(&v, p, 16);
            return (long long)v;
        }
        int64_t s = 0;
        uint64_t u = 0;
        switch (t->size) {
        case 1: s = *(const int8_t *)p, u = *(const uint8_t *)p; break;
        case 2: s = *(const int16_t *)p, u = *(const uint16_t *)p; break;
        case 4: s = *(const int32_t *)p, u = *(const uint32_t *)p; break;
        default: s = *(const int64_t *)p, u = *(const uint64_t *)p; break;
        }
        return t->vc == V_S ? (long long)s : (long long)u;
    }
    /* logical */
    unsigned char bytes[16];
    memcpy(bytes, p, (size_t)t->size);
    for (int i = 0; i < t->size; i++)
        if (bytes[i] != 0)
            return 1;
    return 0;
}

static void set_int(const tcase_t *t, void *p, long long v)
{
    if (t->vc == V_L && t->size == 1 && t->dt != MPI_LOGICAL1) {
        *(bool *)p = v != 0;
        return;
    }
    if (t->size == 16) {
        __int128 w = v;
        memcpy(p, &w, 16);
        return;
    }
    switch (t->size) {
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: *(uint16_t *)p = (uint16_t)v; break;
    case 4: *(uint32_t *)p = (uint32_t)v; break;
    default: *(uint64_t *)p = (uint64_t)v; break;
    }
}

static size_t real_size(ctype_t ct)
{
    switch (ct) {
    case C_F32: return sizeof(float);
    case C_F64: return sizeof(double);
    case C_FLD: return sizeof(long double);
    case C_F16: return 2;
    case C_F128: return 16;
    case C_INT: return sizeof(int);
    case C_SHORT: return sizeof(short);
    case C_LONG: return sizeof(long);
    }
    return 0;
}

static long double get_real(ctype_t ct, const void *p)
{
    switch (ct) {
    case C_F32: return *(const float *)p;
    case C_F64: return *(const double *)p;
    case C_FLD: return *(const long double *)p;
#ifdef __FLT16_MAX__
    case C_F16: return (long double)*(const _Float16 *)p;
#endif
#ifdef __FLT128_MAX__
    case C_F128: return (long double)*(const _Float128 *)p;
#endif
    case C_INT: return *(const int *)p;
    case C_SHORT: return *(const short *)p;
    case C_LONG: return (long double)*(const long *)p;
    default: return 0;
    }
}

static void set_real(ctype_t ct, void *p, long double v)
{
    switch (ct) {
    case C_F32: *(float *)p = (float)v; break;
    case C_F64: *(double *)p = (double)v; break;
    case C_FLD: *(long double *)p = v; break;
#ifdef __FLT16_MAX__
    case C_F16: *(_Float16 *)p = (_Float16)v; break;
#endif
#ifdef __FLT128_MAX__
    case C_F128: *(_Float128 *)p = (_Float128)v; break;
#endif
    case C_INT: *(int *)p = (int)v; break;
    case C_SHORT: *(short *)p = (short)v; break;
    case C_LONG: *(long *)p = (long)v; break;
    default: break;
    }
}

/* Offset of the index in a pair type: the C struct's layout. */
static size_t pair_index_offset(const tcase_t *t)
{
    size_t vs = real_size(t->ct), is = real_size(t->ct2);
    return (vs + is - 1) / is * is;
}

/* ---- one (op, type) ---------------------------------------------------------------------- */

static long long ref_int(MPI_Op op, long long a, long long b)
{
    if (op == MPI_SUM)
        return a + b;
    if (op == MPI_PROD)
        return a * b;
    if (op == MPI_MIN)
        return a < b ? a : b;
    if (op == MPI_MAX)
        return a > b ? a : b;
    if (op == MPI_LAND)
        return a && b;
    if (op == MPI_LOR)
        return a || b;
    if (op == MPI_LXOR)
        return (a != 0) != (b != 0);
    if (op == MPI_BAND)
        return a & b;
    if (op == MPI_BOR)
        return a | b;
    return a ^ b;
}

static void check_pair(const tcase_t *t, const ocase_t *o, size_t extent)
{
    _Alignas(16) unsigned char in[N * 64], io[N * 64], ref[N * 64];
    size_t ioff = pair_index_offset(t);
    memset(in, 0, sizeof(in));
    memset(io, 0, sizeof(io));
    for (int i = 0; i < N; i++) {
        set_real(t->ct, in + i * extent, i % 3);
        set_real(t->ct2, in + i * extent + ioff, 20 - i);
        set_real(t->ct, io + i * extent, (i / 2) % 3); /* ties too */
        set_real(t->ct2, io + i * extent + ioff, i);
    }
    memcpy(ref, io, sizeof(io));
    for (int i = 0; i < N; i++) {
        long double av = get_real(t->ct, in + i * extent), bv = get_real(t->ct, io + i * extent);
        long double ai = get_real(t->ct2, in + i * extent + ioff);
        long double bi = get_real(t->ct2, io + i * extent + ioff);
        int take_a = o->op == MPI_MINLOC ? av < bv : av > bv;
        if (take_a || (av == bv && ai < bi))
            memcpy(ref + i * extent, in + i * extent, extent);
    }
    /* packed, as the collectives move them (a pair with padding packs to its size) */
    _Alignas(16) unsigned char pin[N * 64], pio[N * 64];
    mf_dtype_pack(t->dt, N, in, pin, 0, (MPI_Count)N * mf_dtype_predefined(t->dt)->size);
    mf_dtype_pack(t->dt, N, io, pio, 0, (MPI_Count)N * mf_dtype_predefined(t->dt)->size);
    mf_op_apply_native(o->op, in, io, N, t->dt);
    mf_op_apply(o->op, pin, pio, N, t->dt);
    _Alignas(16) unsigned char unpacked[N * 64];
    memcpy(unpacked, ref, sizeof(unpacked)); /* the padding as in ref */
    mf_dtype_unpack(t->dt, N, unpacked, pio, 0, (MPI_Count)N * mf_dtype_predefined(t->dt)->size);
    UNIT_CHECK(memcmp(unpacked, ref, N * extent) == 0, "%s on packed %s differs", o->name, t->name);
    for (int i = 0; i < N; i++) {
        long double gv = get_real(t->ct, io + i * extent), rv = get_real(t->ct, ref + i * extent);
        long double gi = get_real(t->ct2, io + i * extent + ioff);
        long double ri = get_real(t->ct2, ref + i * extent + ioff);
        UNIT_CHECK(gv == rv && gi == ri, "%s on %s element %d: (%Lg,%Lg), expected (%Lg,%Lg)",
                   o->name, t->name, i, gv, gi, rv, ri);
    }
}

static void check_one(const tcase_t *t, const ocase_t *o)
{
    const mf_dtype_info_t *info = mf_dtype_predefined(t->dt);
    size_t extent = (size_t)info->extent;
    if (t->vc == V_P) {
        check_pair(t, o, extent);
        return;
    }
    _Alignas(16) unsigned char in[N * 32], io[N * 32];
    long long ai[N], bi[N];
    long double complex ac[N], bc[N];
    for (int i = 0; i < N; i++) {
        /* Small values with negatives, zeros and ties; unsigned and logical ones stay >= 0. */
        long long a = (i * 7 + 3) % 11 - 5, b = (i * 5 + 1) % 9 - 4;
        if (t->vc == V_U)
            a = a < 0 ? -a * 37 : a, b = b < 0 ? -b * 53 : b;
        if (t->vc == V_L)
            a = i & 1, b = (i >> 1) & 1;
        ai[i] = a, bi[i] = b;
        ac[i] = a + (long double)(b - 1) * I, bc[i] = b - (long double)(a + 2) * I;
        if (t->vc == V_F) {
            set_real(t->ct, in + i * extent, a);
            set_real(t->ct, io + i * extent, b);
        } else if (t->vc == V_C) {
            size_t rs = real_size(t->ct);
            set_real(t->ct, in + i * extent, creall(ac[i]));
            set_real(t->ct, in + i * extent + rs, cimagl(ac[i]));
            set_real(t->ct, io + i * extent, creall(bc[i]));
            set_real(t->ct, io + i * extent + rs, cimagl(bc[i]));
        } else {
            set_int(t, in + i * extent, a);
            set_int(t, io + i * extent, b);
        }
    }
    mf_op_apply(o->op, in, io, N, t->dt);
    for (int i = 0; i < N; i++) {
        unsigned char *got = io + i * extent;
        if (t->vc == V_F) {
            long double r = ref_int(o->op, ai[i], bi[i]);
            UNIT_CHECK(get_real(t->ct, got) == r, "%s on %s element %d: %Lg, expected %Lg", o->name,
                       t->name, i, get_real(t->ct, got), r);
        } else if (t->vc == V_C) {
            long double complex r = o->op == MPI_SUM ? ac[i] + bc[i] : ac[i] * bc[i];
            size_t rs = real_size(t->ct);
            long double re = get_real(t->ct, got), im = get_real(t->ct, got + rs);
            UNIT_CHECK(re == creall(r) && im == cimagl(r),
                       "%s on %s element %d: (%Lg,%Lg), expected (%Lg,%Lg)", o->name, t->name, i,
                       re, im, creall(r), cimagl(r));
        } else {
            /* The reference is computed wide, then stored in the type and read back, which is
             * the wrap-around an MPI user expects of small integer types. */
            _Alignas(16) unsigned char expect[16];
            set_int(t, expect, ref_int(o->op, ai[i], bi[i]));
            UNIT_CHECK(get_int(t, got) == get_int(t, expect),
                       "%s on %s element %d: %lld, expected %lld (a=%lld b=%lld)", o->name, t->name,
                       i, get_int(t, got), get_int(t, expect), ai[i], bi[i]);
        }
    }
}

/* ---- user-defined operations ------------------------------------------------------------- */

static int user_calls;
static MPI_Datatype user_type;

/* Non-commutative: inout = in * 10 + inout, so the operand order is visible. */
static void user_concat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    user_calls++;
    user_type = *dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = ((int *)in)[i] * 10 + ((int *)inout)[i];
}

static void user_concat_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    user_calls++;
    user_type = *dt;
    for (MPI_Count i = 0; i < *len; i++)
        ((int *)inout)[i] = ((int *)in)[i] * 10 + ((int *)inout)[i];
}

static void check_user(void)
{
    mf_op_t *op = NULL, *op_c = NULL;
    UNIT_CHECK(mf_op_create(user_concat, NULL, 0, &op) == MF_OK, "create");
    UNIT_CHECK(mf_op_create(NULL, user_concat_c, 1, &op_c) == MF_OK, "create_c");
    UNIT_CHECK(mf_op_valid(op) && !mf_op_is_predefined(op), "user op is valid, not predefined");
    UNIT_CHECK(mf_op_commutative(op) == 0 && mf_op_commutative(op_c) == 1, "commutative flags");
    UNIT_CHECK(mf_op_check(op, MPI_C_BOOL) == MF_OK, "user ops accept any type");
    int in[3] = {1, 2, 3}, io[3] = {4, 5, 6};
    mf_op_apply(op, in, io, 3, MPI_INT);
    UNIT_CHECK(io[0] == 14 && io[1] == 25 && io[2] == 36 && user_calls == 1 && user_type == MPI_INT,
               "user op result %d %d %d calls %d", io[0], io[1], io[2], user_calls);
    mf_op_apply(op_c, in, io, 3, MPI_INT);
    UNIT_CHECK(io[0] == 24 && user_calls == 2, "large-count user op result %d", io[0]);
    mf_op_apply(op, in, io, 0, MPI_INT);
    UNIT_CHECK(user_calls == 2, "zero count does not call the user function");
    mf_op_free(op);
    UNIT_CHECK(!mf_op_valid(op), "freed op is no longer valid");
    mf_op_free(op_c);

    UNIT_CHECK(!mf_op_valid(MPI_OP_NULL) && !mf_op_is_predefined(MPI_OP_NULL), "MPI_OP_NULL");
    UNIT_CHECK(!mf_op_valid((MPI_Op)(uintptr_t)0x25), "unassigned op value 0x25");
    UNIT_CHECK(mf_op_commutative(MPI_SUM) == 1, "predefined ops are commutative");
}

int main(void)
{
    size_t nt = sizeof(types) / sizeof(types[0]), no = sizeof(ops) / sizeof(ops[0]);
    for (size_t ti = 0; ti < nt; ti++) {
        const tcase_t *t = &types[ti];
        UNIT_CHECK(mf_dtype_predefined(t->dt) != NULL, "%s is a predefined type", t->name);
        for (size_t oi = 0; oi < no; oi++) {
            const ocase_t *o = &ops[oi];
            int expect = (t->groups & o->groups) != 0;
            int got = mf_op_check(o->op, t->dt) == MF_OK;
            UNIT_CHECK(got == expect, "%s on %s: accepted %d, expected %d", o->name, t->name, got,
                       expect);
            if (got && expect)
                check_one(t, o);
        }
        /* MPI_REPLACE copies, MPI_NO_OP leaves the target alone, for every type. */
        _Alignas(16) unsigned char a[64], b[64], keep[64];
        size_t len = (size_t)mf_dtype_predefined(t->dt)->extent * 2;
        for (size_t i = 0; i < len; i++)
            a[i] = (unsigned char)(i + 1), b[i] = (unsigned char)(200 - i);
        memcpy(keep, b, len);
        UNIT_CHECK(mf_op_check(MPI_NO_OP, t->dt) == MF_OK, "MPI_NO_OP on %s", t->name);
        mf_op_apply_native(MPI_NO_OP, a, b, 2, t->dt);
        UNIT_CHECK(memcmp(b, keep, len) == 0, "MPI_NO_OP changed %s", t->name);
        UNIT_CHECK(mf_op_check(MPI_REPLACE, t->dt) == MF_OK, "MPI_REPLACE on %s", t->name);
        mf_op_apply_native(MPI_REPLACE, a, b, 2, t->dt);
        UNIT_CHECK(memcmp(b, a, len) == 0, "MPI_REPLACE on %s", t->name);
    }
    UNIT_CHECK(mf_op_check(MPI_OP_NULL, MPI_INT) != MF_OK, "MPI_OP_NULL is not applicable");
    check_user();
    return unit_finish("op_test");
}
