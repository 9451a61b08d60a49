// usage: astraeus_slurm_roll_usage START END
// Asks slurmdbd to roll its usage tables up for the UTC hours in [START, END) (Unix seconds) now,
// as its own hourly rollup does for each hour that has ended: `sreport` reads only those tables,
// so without this a test would wait for the next hour. END may lie in the future (the current
// hour is then rolled up with what the database holds so far); the rollup's own bookkeeping
// (last_ran) is left alone, so slurmdbd's regular rollups still run. Needs root or SlurmUser.
// Exit 0 on success; 1 with slurmdbd's message otherwise; 2 on bad arguments.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s START END (Unix seconds)\n", argv[0]);
        return 2;
    }
    char* e1 = nullptr;
    char* e2 = nullptr;
    const long long start = std::strtoll(argv[1], &e1, 10);
    const long long end = std::strtoll(argv[2], &e2, 10);
    if (*e1 != '\0' || *e2 != '\0' || start <= 0 || end <= start) {
        std::fprintf(stderr, "%s: START and END must be Unix seconds with START < END\n", argv[0]);
        return 2;
    }
    slurm_init(nullptr);
    std::uint16_t flags = 0;
    void* db = slurmdb_connection_get(&flags);
    if (db == nullptr) {
        std::fprintf(stderr, "%s: no connection to slurmdbd\n", argv[0]);
        return 1;
    }
    const int rc = slurmdb_usage_roll(db, static_cast<time_t>(start), static_cast<time_t>(end), 0, nullptr);
    slurmdb_connection_close(&db);
    if (rc != SLURM_SUCCESS) {
        std::fprintf(stderr, "%s: rollup refused: %s\n", argv[0], slurm_strerror(rc));
        return 1;
    }
    return 0;
}
