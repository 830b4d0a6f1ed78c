# SPDX-License-Identifier: BSD-3-Clause
# The two entry points of the README. `make check` installs what is missing, builds the
# AddressSanitizer/UBSan tree (all tests) and the ThreadSanitizer tree (multithreaded tests),
# and runs them. `make demo` builds an optimised tree and runs the demonstration.
# Other targets: build, release, check-asan, check-tsan, bench, bench-dtype, bench-coll,
# bench-threads (SUITES=... picks the suites, default all), bench-part, bench-io, bench-instructions,
# check-mpi4py (mpi4py's test suite on the optimised tree; not part of check), check-slurm (the
# optimised tree's programs under Slurm's srun --mpi=pmi2 on this host; needs root; not part of
# check), check-mpich-suite (MPICH's own test suite on the ASan/UBSan tree; not part of check),
# format, clean.

JOBS ?= 2
B := build
CMAKE_COMMON := -G Ninja -DMF_VENV_MPICH=$(CURDIR)/$(B)/venv-mpich \
	-DMF_UCX_PKGCONFIG=$(CURDIR)/$(B)/ucx-pkgconfig

.PHONY: all deps build release check check-asan check-tsan check-mpi4py check-slurm \
	check-mpich-suite unimplemented \
	demo bench bench-dtype bench-coll bench-threads bench-part bench-io bench-instructions format clean

all: build

deps:
	@tools/install-deps.sh

$(B)/dev/build.ninja: | deps
	cmake -S . -B $(B)/dev $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Debug -DMF_SANITIZE=address

$(B)/tsan/build.ninja: | deps
	cmake -S . -B $(B)/tsan $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Debug -DMF_SANITIZE=thread

$(B)/release/build.ninja: | deps
	cmake -S . -B $(B)/release $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Release

build: deps $(B)/dev/build.ninja
	ninja -C $(B)/dev -j $(JOBS)

release: deps $(B)/release/build.ninja
	ninja -C $(B)/release -j $(JOBS)

# UCX's malloc hooks and the sanitizers' allocators must not both patch malloc.
# UCX 1.22's CMA transport probes a peer with process_vm_readv into the probe's own iovec (it
# reads 16 bytes of the peer at the iovec's address). When the peer has that address mapped,
# the sanitizers' interceptor then walks the overwritten iovec and faults at random. Under the
# sanitizers UCX does without CMA; Manifold's own CMA collectives (their iovecs stay put) keep it.
SAN_ENV := UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_EVENTS=no UCX_TLS=^cma

check-asan: build
	cd $(B)/dev && $(SAN_ENV) ctest -j $(JOBS) --output-on-failure --timeout 120

check-tsan: deps $(B)/tsan/build.ninja
	ninja -C $(B)/tsan -j $(JOBS)
	cd $(B)/tsan && $(SAN_ENV) TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tools/tsan.supp" \
	    ctest -j $(JOBS) -L threads --output-on-failure --timeout 180

# Order matters for the reader of the log: the ThreadSanitizer run's CTest summary comes last.
check: release check-asan unimplemented check-tsan

# mpi4py 4.1.2 built with the optimised tree's mpicc_abi, its tests at 1 and 2 processes
# (tests/mpi4py/expected_failures.txt says what is left out and why).
check-mpi4py: release
	tools/check-mpi4py.sh $(B)/release

# Programs of the optimised tree at 1-4 processes under Slurm's srun --mpi=pmi2, on a private
# single-node cluster of this host that the script installs, starts and stops (needs root).
check-slurm: release
	tools/check-slurm.sh $(B)/release

# MPICH 4.0.2's test suite (Debian's source package) built with the ASan/UBSan tree's mpicc and
# run under our mpiexec, about 800 programs in about 20 minutes
# (tests/mpich-suite/expected_failures.txt says what fails and why).
check-mpich-suite: build
	tools/check-mpich-suite.sh $(B)/dev

unimplemented: build
	@python3 tests/abi/report_unimplemented.py --list $(B)/dev/src/unimplemented.txt --api api/mpi_api.json

demo: release
	@tools/demo.sh $(B)/release

bench: release
	tools/install-deps.sh --with-openmpi
	python3 bench/run_p2p.py --build $(B)/release

bench-dtype: release
	tools/install-deps.sh --with-openmpi
	python3 bench/run_dtype.py $(B)/release

bench-coll: release
	tools/install-deps.sh --with-openmpi
	python3 bench/run_coll.py $(B)/release

SUITES ?= all
bench-threads: release
	tools/install-deps.sh --with-openmpi
	python3 bench/run_threads.py $(B)/release --suites $(SUITES)

bench-part: release
	tools/install-deps.sh --with-openmpi
	python3 bench/run_part.py $(B)/release

bench-io: release
	tools/install-deps.sh --with-openmpi
	python3 bench/run_io.py $(B)/release

bench-instructions: release
	tools/install-deps.sh --with-openmpi --with-valgrind
	python3 bench/count_instructions.py $(B)/release

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(B)/dev $(B)/tsan $(B)/release
