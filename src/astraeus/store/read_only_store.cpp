#include "astraeus/store/read_only_store.hpp"

namespace astraeus::store {
namespace {

Error refused(const char* what) {
    return Error{std::string("read-only: a follower never writes the database (") + what + ")"};
}

class ReadOnlyStore final : public Store {
public:
    explicit ReadOnlyStore(std::shared_ptr<SharedStore> s) : s_(std::move(s)) {}

    Result<std::pair<Id, Id>> init(const std::string&, const std::string&) override { return std::unexpected(refused("init")); }
    Result<Id> add_pool(Id, const std::string&) override { return std::unexpected(refused("add_pool")); }
    Result<Id> add_machine(Id, const std::string&, int) override { return std::unexpected(refused("add_machine")); }
    Result<Id> register_machine(Id, const std::string&, int, const std::string&) override {
        return std::unexpected(refused("register_machine"));
    }
    Result<std::string> bind_agent_token(Id, const std::string&) override { return std::unexpected(refused("bind_agent_token")); }
    Result<Id> set_workspace(Id, Id, const std::string&, double) override { return std::unexpected(refused("set_workspace")); }
    Result<Id> add_token(const TokenRec&) override { return std::unexpected(refused("add_token")); }
    Result<void> revoke_token(Id) override { return std::unexpected(refused("revoke_token")); }
    Result<Id> add_session(const SessionRec&, int, Seconds) override { return std::unexpected(refused("add_session")); }
    Result<bool> delete_session(const std::string&) override { return std::unexpected(refused("delete_session")); }
    Result<void> apply(const Batch&) override { return std::unexpected(refused("apply")); }

    Result<std::optional<std::pair<SessionRec, TokenRec>>> session_by_hash(const std::string& h) override {
        return read([&] { return s_->store->session_by_hash(h); });
    }
    Result<std::vector<SessionRec>> sessions(Id t) override { return read([&] { return s_->store->sessions(t); }); }
    Result<std::vector<OrgRec>> orgs() override { return read([&] { return s_->store->orgs(); }); }
    Result<std::vector<ClusterRec>> clusters() override { return read([&] { return s_->store->clusters(); }); }
    Result<std::vector<PoolRec>> pools(Id c) override { return read([&] { return s_->store->pools(c); }); }
    Result<std::vector<MachineRec>> machines(Id c) override { return read([&] { return s_->store->machines(c); }); }
    Result<std::vector<WorkspaceRec>> workspaces(Id o, Id c) override {
        return read([&] { return s_->store->workspaces(o, c); });
    }
    Result<std::vector<TokenRec>> tokens() override { return read([&] { return s_->store->tokens(); }); }
    Result<std::optional<TokenRec>> token_by_hash(const std::string& h) override {
        return read([&] { return s_->store->token_by_hash(h); });
    }
    Result<std::vector<RunRec>> runs() override { return read([&] { return s_->store->runs(); }); }
    Result<std::vector<GoodputRowRec>> goodput_rows() override { return read([&] { return s_->store->goodput_rows(); }); }
    Result<std::vector<AlertRec>> alerts() override { return read([&] { return s_->store->alerts(); }); }
    Result<std::optional<std::int64_t>> meta(const std::string& k) override { return read([&] { return s_->store->meta(k); }); }
    Result<std::vector<IdempotencyRec>> idempotency_keys() override {
        return read([&] { return s_->store->idempotency_keys(); });
    }
    Result<std::optional<IdempotencyRec>> idempotency_key(Id t, const std::string& k) override {
        return read([&] { return s_->store->idempotency_key(t, k); });
    }
    int schema_version() override { return read([&] { return s_->store->schema_version(); }); }

private:
    template <class F>
    auto read(F&& f) -> decltype(f()) {
        std::lock_guard lk(s_->mu);
        return f();
    }
    std::shared_ptr<SharedStore> s_;
};

}  // namespace

std::unique_ptr<Store> read_only_view(std::shared_ptr<SharedStore> shared) {
    return std::make_unique<ReadOnlyStore>(std::move(shared));
}

}  // namespace astraeus::store
