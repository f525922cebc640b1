"""Every limit a user can run into, named once: depths, budgets, sizes, caches and timeouts.

Each name says what it bounds. The modules that enforce a limit import it from here, so a limit is
changed in one place and its error messages quote the value in force.
"""

# ------------------------------------------------------------------------------------ call depth
#: device-function calls the emulator nests before it reports unbounded recursion
EMULATOR_CALL_DEPTH = 64
#: device-function calls the static interpreter follows; deeper ones are not followed (their blocks flagged)
STATIC_CALL_DEPTH = 8
#: device-function calls inlined into an executed instruction sequence; deeper calls stay one instruction
SEQUENCE_CALL_DEPTH = 4

# ----------------------------------------------------------------------------------- work budgets
#: warp instructions one emulated launch may execute (``emulate(max_steps=...)`` overrides it)
EMULATOR_MAX_STEPS = 2_000_000
#: warp instructions of one launch on the fake device (``--device fake``)
FAKE_DEVICE_MAX_STEPS = 5_000_000
#: row-instructions the static interpreter may execute before it falls back to branch probabilities
STATIC_MAX_WORK = 2e9
#: group-instructions (numpy calls) the static interpreter may execute before that fallback
STATIC_MAX_STEPS = 2_000_000
#: threads the static interpreter runs in one launch: every CTA when control flow is not affine in the CTA
#: index and the launch is no larger, else the corner CTAs of classes of CTAs (counted without proof after it)
STATIC_MAX_THREADS = 1 << 20
#: warp instructions the memory rules (PS101, PS102) emulate per kernel; what ran until then is measured
MEMORY_RULES_MAX_STEPS = 5_000
#: warps of the sampled CTA (0, 1, ...) whose accesses the memory rules measure
MEMORY_RULES_SAMPLE_WARPS = 4
#: requests of one instruction the memory rules keep per state space and sampled warp (the first ones executed)
MEMORY_RULES_SAMPLE_REQUESTS = 8
#: turns (time slices) in a row in which every sampled warp added no request, after which the memory rules'
#: emulation of a kernel ends; a sampled warp that has made no request yet counts after QUIET turns in all
MEMORY_RULES_IDLE_TURNS = 2
MEMORY_RULES_QUIET_TURNS = 8
#: iterations of a loop the static interpreter runs, and row-instructions they take, before it extrapolates the rest
#: of a loop whose trip count it knows in closed form but whose iterations differ (a switch on a hash, a maths
#: function of a value that changes every iteration) from the iterations it ran
STATIC_LOOP_SAMPLE_ITERATIONS = 8
STATIC_LOOP_SAMPLE_WORK = 1e6
#: CTAs of a launch the static estimator emulates, stratified by class, to measure the branches on data it cannot read
#: (shared memory, memory the kernel writes, atomics), the warp instructions they may run in all, and the share of
#: the time budget (--max-seconds) by which the sample must end
STATIC_DATA_SAMPLE_CTAS = 8
STATIC_DATA_SAMPLE_STEPS = 200_000
STATIC_DATA_SAMPLE_SHARE = 0.5
#: corner CTAs the static interpreter's search for classes of alike CTAs interprets (past it, the classes
#: left are counted from their corners without proof, flagged), and the CTAs it samples from a launch of more
#: than STATIC_MAX_THREADS threads whose control flow is not affine in the CTA index
STATIC_CLASS_CTAS = 256
#: CPU seconds the nvcc hook's analysis of one translation unit may take (parse and rules; the thread's CPU
#: time): past it no rule starts and the memory rules' emulation stops, and one note says what was left undone
HOOK_BUDGET_S = 1.0
#: CPU seconds the static interpreter may run (``--max-seconds``; CPU, not wall-clock, so that a loaded machine
#: gives the same counts); threads not counted by then get branch-probability frequencies
STATIC_MAX_SECONDS = 1.5

# ------------------------------------------------------------------------------------------ sizes
#: ``{ }`` blocks nested inside a function body: ptxas 13's parser gives up deeper ("memory exhausted")
MAX_BLOCK_NESTING = 1663
#: threads of one warp on every CUDA GPU
WARP_SIZE = 32
#: threads of one CTA, and per block dimension (x, y, z), on every CUDA GPU since compute capability 2.0
MAX_BLOCK_THREADS = 1024
MAX_BLOCK_DIMS = (1024, 1024, 64)
#: CTAs per grid dimension (x, y, z), compute capability 3.0 and later
MAX_GRID_DIMS = ((1 << 31) - 1, 65535, 65535)
#: dynamic shared memory of one CTA: the largest opt-in amount of any GPU (227 KiB, sm_90 and sm_100)
MAX_DYNAMIC_SHARED_BYTES = 227 * 1024
#: static shared memory of one kernel (its .shared variables and those of what it calls) on every target
MAX_STATIC_SHARED_BYTES = 48 * 1024
#: instructions of an executed sequence kept in expanded form (the compact form is never cut)
SEQUENCE_CAP = 20_000
#: bytes of global memory (variables, parameters, buffers) one emulated launch may lay out; only the 4 KiB
#: pages it touches are made
EMULATOR_GLOBAL_BYTES = 1 << 40
#: elements of a buffer of random integers up to which any slice of it has the exact values of the whole
#: (larger ones are drawn slice by slice when an emulation touches them)
EXACT_RANDOM_ELEMENTS = 1 << 24
#: bytes of a CUDA source file read for a kernel's C++ parameter names
CXX_SOURCE_BYTES = 16 * 1024 * 1024
#: bytes of a model card a model directory may hold
MODEL_CARD_BYTES = 64 * 1024 * 1024
#: bytes of one array a model directory may hold (its .npy header is read before the data)
MODEL_ARRAY_BYTES = 256 * 1024 * 1024
#: bytes of all the arrays of one model together, from the shapes its card lists (checked before decompressing)
MODEL_TOTAL_BYTES = 512 * 1024 * 1024
#: statement shapes the parser keeps in memory in one process
SHAPE_CACHE_ENTRIES = 100_000
#: statement shapes kept in the on-disk shape cache (the most recently added)
SHAPE_CACHE_DISK_ENTRIES = 50_000
#: results ``ptxstatic check`` keeps in its on-disk cache (the most recently used)
CHECK_CACHE_ENTRIES = 4096
#: PTX files the nvcc hook keeps in the user cache for findings without line information (the newest)
HOOK_KEPT_PTX_FILES = 256

# --------------------------------------------------------------------------------------- timeouts
#: seconds ``nvcc -ptx`` may take for one file
NVCC_TIMEOUT_S = 600.0
#: seconds ``ptxas`` may take to assemble one module
PTXAS_TIMEOUT_S = 600.0
#: seconds ``ptxas -v`` may take for a module's resource statistics (what the rules and features read); past
#: it they are skipped with a note, as for a module larger than PTXAS_STATS_BYTES
PTXAS_STATS_TIMEOUT_S = 120.0
#: bytes of PTX up to which ``ptxas -v`` is run for resource statistics (46 MB took ptxas over 7 minutes);
#: larger modules have their resources estimated from the PTX, with a note saying so
PTXAS_STATS_BYTES = 8 * 1024 * 1024
#: bytes of each output stream (stdout, stderr) of an external tool that are read (the rest stays on disk
#: until the tool ends and is reported as cut)
TOOL_OUTPUT_BYTES = 16 * 1024 * 1024
#: bytes of PTX that ``nvcc -ptx`` may write for one file and that are read back
NVCC_PTX_BYTES = 512 * 1024 * 1024
#: characters of a mangled name given to the C++ demangler; longer names are shown as they are
DEMANGLE_NAME_CHARS = 4096
#: seconds graphviz ``dot`` may take to lay out one basic-block graph
DOT_TIMEOUT_S = 60.0
#: seconds a tool may take to answer ``--version``
TOOL_QUERY_TIMEOUT_S = 60.0
#: seconds one device call (a launch, a timed loop) may take before the kernel is taken to hang
DEVICE_CALL_TIMEOUT_S = 300.0
#: seconds a device worker process may take to start and open the GPU
DEVICE_START_TIMEOUT_S = 120.0
#: seconds ``collect --budget`` keeps for ending a run (restoring clocks, closing the device and the dataset)
BUDGET_RESERVE_S = 2.0
#: bytes of host memory that keep the initial contents of recently packed kernel buffers for the next packing
HOST_FILL_CACHE_BYTES = 8 << 30
#: seconds the hook's analysis server stays up without a compile to serve (``PTXSTATIC_SERVER_IDLE`` sets it)
HOOK_SERVER_IDLE_S = 600.0
#: seconds the hook waits for the analysis server to accept a compile (nvcc runs meanwhile); past it, the
#: hook analyses in its own process
HOOK_SERVER_ACCEPT_S = 2.0
#: seconds the hook waits, once nvcc has finished, for the analysis server's findings; past it, one note
HOOK_SERVER_RESULT_S = 60.0
#: seconds a stopping analysis server waits to connect to its own socket, the call that wakes its accepting loop
HOOK_SERVER_WAKE_S = 1.0
#: seconds the hook's analysis server lets the statement shapes it learns gather before it writes them to disk (as
#: soon as no analysis is waiting, and when none has come for this long)
HOOK_SERVER_SHAPES_S = 5.0
#: seconds the analysis server keeps watching a temporary directory after the last compile that used it
HOOK_WATCH_LINGER_S = 10.0
#: seconds the language server waits after an edit before analysing (a newer edit restarts the wait)
LSP_DEBOUNCE_S = 0.4

# ------------------------------------------------------------------------------------------ traffic model
#: CTAs of a launch the traffic model emulates (the first ones of the grid)
TRAFFIC_SAMPLE_CTAS = 4
#: warp instructions the traffic model's sample may run (what decides where it ends: results do not depend on
#: the machine), and the seconds it may take in any case
TRAFFIC_MAX_STEPS = 40_000
TRAFFIC_SECONDS = 10.0
#: launches whose traffic a process keeps computed
TRAFFIC_CACHE = 32
#: functions whose def-use chains are kept for the next analysis of the same function
DEF_USE_KEPT = 4
