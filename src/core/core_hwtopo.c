/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: MPI_Comm_split_type by hardware resource (MPI-4.1 section 7.4.2), from hwloc's view
 * of this host. A process belongs to the object of the requested type that contains its whole
 * CPU binding; a process whose binding spans several such objects (an unbound process and
 * "Core") or a type this host does not have gets MPI_COMM_NULL. The split always happens inside
 * a node first (MPI_COMM_TYPE_SHARED), so objects of different nodes never mix. The topology is
 * loaded once, on first use.
 */
#include "core.h"

#include "coll.h"

#include <hwloc.h>
#include <stdlib.h>
#include <string.h>

static struct {
    pthread_mutex_t lock;
    int tried;
    hwloc_topology_t topo;
} hw = {.lock = PTHREAD_MUTEX_INITIALIZER};

static hwloc_topology_t hw_topology(void)
{
    pthread_mutex_lock(&hw.lock);
    if (!hw.tried) {
        hw.tried = 1;
        if (hwloc_topology_init(&hw.topo) != 0) {
            hw.topo = NULL;
        } else if (hwloc_topology_load(hw.topo) != 0) {
            hwloc_topology_destroy(hw.topo);
            hw.topo = NULL;
        }
        if (hw.topo == NULL)
            mf_log(MF_LOG_WARN, "hwtopo", "hwloc cannot read this host's topology");
    }
    hwloc_topology_t topo = hw.topo;
    pthread_mutex_unlock(&hw.lock);
    return topo;
}

/* The logical index of the object at `depth` that contains the calling thread's binding (other
 * threads of the library may run anywhere), or -1. */
static int object_of_binding(hwloc_topology_t topo, int depth)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int index = -1;
    if (set != NULL && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_THREAD) == 0 &&
        !hwloc_bitmap_iszero(set)) {
        int n = hwloc_get_nbobjs_by_depth(topo, depth);
        for (int i = 0; i < n && index < 0; i++) {
            hwloc_obj_t obj = hwloc_get_obj_by_depth(topo, depth, (unsigned)i);
            if (obj != NULL && obj->cpuset != NULL && hwloc_bitmap_isincluded(set, obj->cpuset))
                index = i;
        }
    }
    hwloc_bitmap_free(set);
    return index;
}

/* The hwloc depth of a resource name ("Package", "NUMANode", "L3Cache", "Core", "PU"; also
 * "hwthread" for PU), or HWLOC_TYPE_DEPTH_UNKNOWN. */
static int depth_of_name(hwloc_topology_t topo, const char *name)
{
    if (strcmp(name, "hwthread") == 0)
        name = "PU";
    hwloc_obj_type_t type;
    int depth = HWLOC_TYPE_DEPTH_UNKNOWN;
    if (hwloc_type_sscanf_as_depth(name, &type, topo, &depth) != 0 ||
        depth == HWLOC_TYPE_DEPTH_MULTIPLE)
        return HWLOC_TYPE_DEPTH_UNKNOWN;
    return depth;
}

mf_status_t mf_comm_set_resource_info(mf_comm_t *comm, const char *name)
{
    struct MPI_ABI_Info *info;
    mf_status_t status = mf_info_create(&info);
    if (status != MF_OK)
        return status;
    status = mf_info_set(info, "mpi_hw_resource_type", name);
    if (status == MF_OK)
        status = mf_comm_set_info(comm, info, 0); /* a new communicator */
    mf_info_free(info);
    return status;
}

/* Split `node` (one node's processes) by the object at `depth` holding each binding. */
static mf_status_t split_at(mf_comm_t *node, int index, int key, const char *name,
                            mf_comm_t **comm_p)
{
    mf_comm_t *out = NULL;
    mf_status_t status = mf_comm_split(node, index >= 0 ? index : MPI_UNDEFINED, key, &out);
    if (status == MF_OK && out != NULL &&
        (status = mf_comm_set_resource_info(out, name)) != MF_OK) {
        mf_comm_free(out);
        out = NULL;
    }
    if (status == MF_OK)
        *comm_p = out;
    return status;
}

/* MPI_COMM_TYPE_HW_UNGUIDED inside one node: the first level below the machine whose objects
 * hold every process and more than one of them, else no level (MPI_COMM_NULL). The levels are
 * tried in the same order everywhere and decided on gathered data, so all agree. */
static mf_status_t split_unguided(mf_comm_t *node, hwloc_topology_t topo, int key,
                                  mf_comm_t **comm_p)
{
    int *all = mf_malloc(sizeof(int) * (size_t)node->size, "hardware objects");
    if (all == NULL)
        return MF_ERR_NO_MEMORY;
    int ndepths = topo != NULL ? hwloc_topology_get_depth(topo) : 0;
    mf_status_t status = MF_OK;
    *comm_p = NULL;
    for (int depth = 1; depth < ndepths; depth++) {
        int mine = object_of_binding(topo, depth);
        status = mf_coll_allgather(node, &mine, sizeof(int), all);
        if (status != MF_OK)
            break;
        int divides = 0, bound = 1;
        for (int i = 0; i < node->size; i++) {
            bound &= all[i] >= 0;
            divides |= all[i] != all[0];
        }
        if (bound && divides) {
            hwloc_obj_t obj = hwloc_get_obj_by_depth(topo, depth, 0);
            const char *name = obj != NULL ? hwloc_obj_type_string(obj->type) : "unknown";
            status = split_at(node, mine, key, name, comm_p);
            break;
        }
    }
    free(all);
    return status;
}

mf_status_t mf_comm_split_hw(mf_comm_t *parent, const char *resource, int key, mf_comm_t **comm_p)
{
    mf_comm_t *node = NULL;
    mf_status_t status = mf_comm_split_shared(parent, 1, key, &node);
    if (status != MF_OK)
        return status;
    hwloc_topology_t topo = hw_topology();
    if (resource == NULL && node->size < parent->size) {
        /* Unguided across nodes: the node is the first level that divides. */
        status = mf_comm_set_resource_info(node, "mpi_shared_memory");
        if (status == MF_OK) {
            *comm_p = node;
            return MF_OK;
        }
    } else if (resource == NULL) {
        status = split_unguided(node, topo, key, comm_p);
    } else {
        int depth = topo != NULL ? depth_of_name(topo, resource) : HWLOC_TYPE_DEPTH_UNKNOWN;
        int index = depth != HWLOC_TYPE_DEPTH_UNKNOWN ? object_of_binding(topo, depth) : -1;
        /* Every process takes part even when it gets no communicator. */
        status = split_at(node, index, key, resource, comm_p);
    }
    mf_comm_free(node);
    return status;
}
