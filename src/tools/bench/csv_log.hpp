// --csv: every timed iteration, for plots and distributions the table cannot show.
#pragma once

#include <cstdio>
#include <memory>
#include <span>
#include <string>

namespace optireduce::bench {

class CsvLog {
public:
    CsvLog() = default; // disabled: writes nothing
    // Opens `path` and writes the header; false when it cannot be created.
    bool open(const std::string& path);

    void write(std::size_t bytes, const char* mode, std::span<const double> latencies_us);

    // Closes the file; false if any write failed (a full disk must not leave a silently short log).
    bool close();

private:
    struct Closer {
        void operator()(std::FILE* f) const { std::fclose(f); }
    };
    std::unique_ptr<std::FILE, Closer> file_;
};

} // namespace optireduce::bench
